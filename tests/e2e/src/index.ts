export type {
  ChatCompletionBody,
  ChatContentPart,
  ChatMessage,
  ChatTool,
  ChatToolCall,
  FakeModel,
  ModelReply,
  ModelRequest,
  ReplyScript,
  StreamPacing,
  ToolCallSpec,
} from "./fake-model.ts";
export {
  FAKE_MODEL_ID,
  lastMessage,
  lastMessageText,
  lastToolResultText,
  lastUserText,
  messageText,
  startFakeModel,
  text,
  toolCall,
  toolCalls,
  whenLastMessageContains,
  whenToolResultContains,
} from "./fake-model.ts";
export type { PiSessionOptions, RpcCommand, RpcRecord, RpcResponse, WaitOptions } from "./pi-session.ts";
export { FAKE_PROVIDER, PI_BIN, PiSession, startPiSession } from "./pi-session.ts";
export type { ScratchDir } from "./scratch.ts";
export { isAlive, makeScratchDir, writeExtension } from "./scratch.ts";
