export type { PiwExtensionOptions } from "./piw-extension.js";
export { piwExtension } from "./piw-extension.js";
export type { PiwMessageDetails } from "./session-bridge.js";
export { PIW_MESSAGE_TYPE } from "./session-bridge.js";
export type { WorkflowAction, WorkflowActionName } from "./workflow-actions.js";
export { parseAction, WORKFLOW_ACTIONS } from "./workflow-actions.js";
export { parseWorkflowCommand, WORKFLOW_USAGE } from "./workflow-command.js";
