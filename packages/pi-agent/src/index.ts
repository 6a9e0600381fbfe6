export { createModelCheck } from "./check-step-models.js";
export { loadPiSdk, PiSdkMissing } from "./load-pi-sdk.js";
export type { IsolatedProgress } from "./pi-agent-sessions.js";
export { createPiAgentSessions } from "./pi-agent-sessions.js";
