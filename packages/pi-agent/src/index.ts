export { loadPiSdk, PiSdkMissing } from "./load-pi-sdk.js";
export { createPiAgentSessions } from "./pi-agent-sessions.js";
