// The harnesses every test shares: the scripted fake model, the real Pi driven over RPC or in a
// terminal, the piw processes from source, and the small waits and checks tests repeat.
export type { DocCommand } from "./doc-commands.ts";
export { extractCommands, runDocCommands, unexpectedEndings } from "./doc-commands.ts";
export type { FakeModel, ModelReply, ModelRequest } from "./fake-model.ts";
export {
  lastMessage,
  lastMessageText,
  lastToolResultText,
  lastUserText,
  messageText,
  startFakeModel,
  text,
  toolCall,
  whenLastMessageContains,
  whenToolResultContains,
} from "./fake-model.ts";
export { problemsOf } from "./compile-problems.ts";
export type { GhCheck, GhStandIn } from "./gh-stand-in.ts";
export { installGhStandIn } from "./gh-stand-in.ts";
export type { HerdrStandIn } from "./herdr-stand-in.ts";
export { installHerdrStandIn } from "./herdr-stand-in.ts";
export { lines } from "./file-lines.ts";
export { removeTree } from "./remove-tree.ts";
export { isAlive } from "./is-alive.ts";
export { packPiw, requireBuiltPackage, sharedNpmCache, userEnv } from "./packed-install.ts";
export { fakeAgentHome, PI_TEST_ENV } from "./pi-agent-dir.ts";
export type { RpcRecord } from "./pi-session.ts";
export { PI_BIN, PiSession, startPiSession } from "./pi-session.ts";
export { PiTerminal } from "./pi-terminal.ts";
export type { PiwWorld } from "./piw-fixture.ts";
export { PI_PACKAGE, piwEnv, piwMessages, queuedRunId, startPiwWorld } from "./piw-fixture.ts";
export {
  HOST_COMMAND,
  hostPidIn,
  PREFLIGHT_COMMAND,
  pidIn,
  REPO,
  sourceWorkerEnv,
  stopHost,
  stopHostProcess,
  TSX_LOADER,
  WORKER_COMMAND,
} from "./piw-processes.ts";
export type { ScratchDir } from "./scratch.ts";
export { makeScratchDir, writeExtension } from "./scratch.ts";
export { waitFor } from "./wait-for.ts";
