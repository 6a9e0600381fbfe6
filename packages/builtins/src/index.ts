export { BUILTIN_WORKFLOWS } from "./builtin-workflows.js";
