import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ExtensionAPI, ExtensionContext } from "@earendil-works/pi-coding-agent";
import { prepareLaunch, reserveRequest } from "@piw/engine";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { SessionBridge } from "../src/session-bridge.js";
import { HOST_COMMAND, removeTree, sourceWorkerEnv, stopHostProcess } from "@piw/test-kit";

// The real host and worker, from source, as separate processes; only Pi itself is played by the test.

// Once it completes, the host queues two messages for the session: the terminal note, then the
// presentation follow-up that asks the model for a human-readable answer.
const ANNOUNCE = `import { compute, defineWorkflow } from "piw";
export default defineWorkflow({
  name: "announce",
  startAt: "check",
  presentationPrompt: "Tell the user whether the build is green.",
  nodes: { check: compute({ run: () => ({ green: true }) }) },
  edges: { check: { to: "done" } },
});
`;

const SESSION = "session-under-test";

interface PiStub {
  pi: ExtensionAPI;
  ctx: ExtensionContext;
  entries: Array<Record<string, unknown>>;
  sent: Array<{ content: string; details: { piwMessageId: string } }>;
  /** Whether an agent run is streaming (Pi's `isIdle()` is false while it is). */
  streaming: boolean;
}

/** Just the parts of Pi the bridge uses: a session with entries, and sendMessage that appends one. */
function piStub(): PiStub {
  const entries: Array<Record<string, unknown>> = [];
  const sent: PiStub["sent"] = [];
  const stub = { entries, sent, streaming: false } as PiStub;
  const pi = {
    sendMessage(message: { customType: string; content: string; details: { piwMessageId: string } }) {
      sent.push(message);
      entries.push({ type: "custom_message", customType: message.customType, details: message.details });
    },
  } as unknown as ExtensionAPI;
  const ctx = {
    sessionManager: { getSessionId: () => SESSION, getEntries: () => entries },
    isIdle: () => !stub.streaming,
    hasPendingMessages: () => false,
    ui: { setWidget() {}, setStatus() {} },
  } as unknown as ExtensionContext;
  stub.pi = pi;
  stub.ctx = ctx;
  return stub;
}

let root: string;
let bridges: SessionBridge[] = [];
beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), "piw-ext-delivery-"));
  mkdirSync(join(root, "project", ".pi", "workflows"), { recursive: true });
  writeFileSync(join(root, "project", ".pi", "workflows", "announce.workflow.ts"), ANNOUNCE);
  Object.assign(process.env, sourceWorkerEnv());
});

afterEach(async () => {
  for (const bridge of bridges) {
    // Close the bridge's link first: it would start a new host when this one goes away.
    const status = await bridge.host.call("host.status", {}).catch(() => undefined);
    await bridge.shutdown();
    // The host stops its workers (the idle one too) and exits; then nothing writes in the state dir.
    if (status !== undefined) await stopHostProcess(status.pid);
  }
  bridges = [];
  // The stopping host may still be writing its caches for a moment.
  removeTree(root);
});

function bridgeFor(stub: PiStub): SessionBridge {
  const bridge = new SessionBridge(stub.pi, { hostCommand: HOST_COMMAND, stateDir: join(root, "state") });
  bridge.remember(stub.ctx);
  bridges.push(bridge);
  return bridge;
}

async function finishedRunWithMessages(bridge: SessionBridge): Promise<{ runId: string; ids: string[] }> {
  const project = join(root, "project");
  const prepared = await prepareLaunch({ ref: "announce", cwd: project });
  const reserved = await bridge.host.call(
    "runs.reserve",
    reserveRequest(prepared, { origin: { kind: "pi", sessionId: SESSION }, workingDir: project }),
  );
  if (reserved.kind !== "applied") throw new Error(JSON.stringify(reserved));
  const runId = reserved.value.runId;
  await bridge.host.call("session.settled", { sessionId: SESSION });
  for (let i = 0; i < 300; i += 1) {
    const history = await bridge.host.call("runs.history", { runId });
    if (
      history?.messages.length === 2 &&
      (await bridge.host.call("runs.get", { runId }))?.status === "done"
    ) {
      return { runId, ids: history.messages.map((m) => m.messageId) };
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error("the run did not finish with its two messages");
}

describe("message delivery to the Pi session", () => {
  it("sends each queued message once and acknowledges it in the host's outbox", async () => {
    const stub = piStub();
    const bridge = bridgeFor(stub);
    const { runId, ids } = await finishedRunWithMessages(bridge);
    await bridge.deliver();
    // The terminal note first, then the presentation, which starts the turn.
    expect(stub.sent.map((m) => m.details.piwMessageId)).toEqual([
      `msg:${runId}:terminal`,
      `msg:${runId}:presentation`,
    ]);
    expect([...ids].sort()).toEqual(stub.sent.map((m) => m.details.piwMessageId).sort());
    expect(stub.sent[0]?.content).toContain("Workflow announce completed");
    expect(stub.sent[1]?.content).toContain("Tell the user whether the build is green.");
    const history = await bridge.host.call("runs.history", { runId });
    expect(history?.messages.map((m) => m.status)).toEqual(["delivered", "delivered"]);
    await bridge.deliver();
    expect(stub.sent).toHaveLength(2);
  }, 60_000);

  it("after a crash between the session append and the acknowledgement, acknowledges without sending again", async () => {
    const stub = piStub();
    const bridge = bridgeFor(stub);
    const { runId, ids } = await finishedRunWithMessages(bridge);
    // The previous Pi process appended the terminal note to the session, then died before the ack.
    const appended = `msg:${runId}:terminal`;
    expect(ids).toContain(appended);
    stub.entries.push({
      type: "custom_message",
      customType: "piw",
      details: { piwMessageId: appended, runId },
    });
    await bridge.deliver();
    expect(stub.sent.map((m) => m.details.piwMessageId)).toEqual([`msg:${runId}:presentation`]);
    const history = await bridge.host.call("runs.history", { runId });
    expect(history?.messages.map((m) => m.status)).toEqual(["delivered", "delivered"]);
    // The session holds each message exactly once.
    const inSession = stub.entries.map((e) => (e.details as { piwMessageId: string }).piwMessageId);
    expect(inSession.sort()).toEqual([...ids].sort());
  }, 60_000);

  it("gives a message back when a turn starts between the idle check and the send, and sends it after that turn", async () => {
    const stub = piStub();
    const bridge = bridgeFor(stub);
    const { runId, ids } = await finishedRunWithMessages(bridge);
    // The user's prompt starts an agent run while the host answers the first claim: Pi was idle when
    // the delivery began and is streaming by the time the claimed message could be sent.
    const call = bridge.host.call.bind(bridge.host);
    let turnPending = true;
    bridge.host.call = (async (method, params) => {
      const reply = await call(method, params);
      if (method === "messages.claim" && turnPending) {
        turnPending = false;
        bridge.agentStarting(undefined);
        stub.streaming = true;
        bridge.agentStarted();
      }
      return reply;
    }) as typeof bridge.host.call;
    await bridge.deliver();
    expect(turnPending).toBe(false);
    expect(stub.sent).toEqual([]);
    // Given back, not left claimed: both are first in line for the next idle boundary.
    const during = await bridge.host.call("runs.history", { runId });
    expect(during?.messages.map((m) => m.status)).toEqual(["pending", "pending"]);

    // The user's turn ends; at the idle boundary both messages go out, in order.
    stub.streaming = false;
    await bridge.agentEnded([{ role: "assistant", stopReason: "stop" }]);
    await bridge.settled();
    expect(stub.sent.map((m) => m.details.piwMessageId)).toEqual([
      `msg:${runId}:terminal`,
      `msg:${runId}:presentation`,
    ]);
    const after = await bridge.host.call("runs.history", { runId });
    expect(after?.messages.map((m) => m.status)).toEqual(["delivered", "delivered"]);
    expect([...ids].sort()).toEqual(stub.sent.map((m) => m.details.piwMessageId).sort());
  }, 60_000);
});
