// piw preflight: started by `piw run`/`piw answer` and the Pi extension for one request, so workflow
// code loads here and never in the process that speaks for the user. See evaluatePreflight (@piw/engine).
import { servePreflight } from "@piw/engine";

servePreflight();
