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
export { PiSession, startPiSession } from "./pi-session.ts";
export type { ScratchDir } from "./scratch.ts";
export { isAlive, makeScratchDir, writeExtension } from "./scratch.ts";
