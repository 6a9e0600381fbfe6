// piw preflight: started by `piw run`/`piw answer` and the Pi extension for one request, so workflow
// code loads here and never in the process that speaks for the user. See evaluatePreflight (@piw/engine).
// The model check loads Pi's SDK only for a workflow with isolated agent steps.
import { servePreflight } from "@piw/engine";
import { createModelCheck } from "@piw/pi-agent";
import "./register-builtins.js";

servePreflight({ checkModels: createModelCheck() });
