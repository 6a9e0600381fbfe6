export type { PiSdk } from "./load-pi-sdk.js";
export { loadPiSdk, PI_SDK_ENV, PI_SDK_PACKAGE, PiSdkMissing } from "./load-pi-sdk.js";
export type { IsolatedProgress, PiAgentSessionsOptions } from "./pi-agent-sessions.js";
export { createPiAgentSessions } from "./pi-agent-sessions.js";
export {
  boundedTranscript,
  TRANSCRIPT_ENTRIES_MAX,
  TRANSCRIPT_TEXT_MAX,
  toolCallSummary,
  usageOf,
} from "./session-record.js";
