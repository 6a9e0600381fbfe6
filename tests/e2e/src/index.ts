export type { FakeModel } from "./fake-model.ts";
export {
  lastMessage,
  lastMessageText,
  lastUserText,
  messageText,
  startFakeModel,
  text,
  toolCall,
  whenLastMessageContains,
  whenToolResultContains,
} from "./fake-model.ts";
export type { AgentConfigOptions, ModelCost } from "./pi-agent-dir.ts";
export { fakeAgentHome, PI_TEST_ENV, writeAgentConfig } from "./pi-agent-dir.ts";
export { PiSession, startPiSession } from "./pi-session.ts";
export type { ScratchDir } from "./scratch.ts";
export { isAlive, makeScratchDir, writeExtension } from "./scratch.ts";
