export { piwExtension } from "./piw-extension.js";
export { parseAction, WORKFLOW_ACTIONS } from "./workflow-actions.js";
export { parseWorkflowCommand, WORKFLOW_USAGE } from "./workflow-command.js";
