export { BUILTIN_WORKFLOWS } from "./builtin-workflows.js";
export { BUILTIN_SOURCE_DIGESTS } from "./source-digests.js";
