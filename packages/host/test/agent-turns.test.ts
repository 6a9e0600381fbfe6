import { isSaved, type MessageRecord } from "@piw/protocol";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { RunningHost } from "../src/index.js";
import { type Sandbox, sandbox, start, TestClient, writeWorkflow } from "./host-fixture.js";

let box: Sandbox;
let host: RunningHost | undefined;
let client: TestClient | undefined;
beforeEach(() => {
  box = sandbox();
});
afterEach(async () => {
  client?.close();
  await host?.stop();
  host = undefined;
  box.cleanup();
});

const SESSION = "s-turns";

const ASK = `import { agent, defineWorkflow } from "piw";
import { z } from "zod";
export default defineWorkflow({
  name: "ask",
  input: z.object({}),
  startAt: "draft",
  nodes: { draft: agent({ prompt: "Write something.", output: z.object({ text: z.string() }) }) },
  edges: { draft: { to: "done" } },
});
`;

/**
 * Plays the Pi extension's part over the real socket: the host's outbox delivers step prompts, and
 * each turn is proposed at `agent_start` and ended the way Pi would end it.
 */
class FakeSession {
  private requests = 0;
  constructor(private readonly c: TestClient) {}

  /** The next message for the session (a step prompt, a reminder or a retry), marked delivered. */
  async nextMessage(): Promise<MessageRecord> {
    const deadline = Date.now() + 20_000;
    while (Date.now() < deadline) {
      const claimed = await this.c.call("messages.claim", { sessionId: SESSION });
      const [message] = isSaved(claimed) ? claimed.value : [];
      if (message) {
        await this.c.call("messages.delivered", { messageId: message.messageId });
        return message;
      }
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error("no message for the session");
  }

  /** A turn for the next message; returns its kind (the last part of the message ID) and request ID. */
  async startTurn(): Promise<{ kind: string; requestId: string }> {
    const message = await this.nextMessage();
    this.requests += 1;
    const requestId = `req-${this.requests}`;
    const started = await this.c.call("turns.start", {
      sessionId: SESSION,
      requestId,
      messageId: message.messageId,
    });
    expect(started).toMatchObject({ kind: "applied", value: { owner: "workflow" } });
    return { kind: message.messageId.split(":").slice(4).join(":"), requestId };
  }

  /**
   * Pi ends the turn: the model stopped (`completed`), the provider failed it (`error`) or refused
   * the model for good (`model_unavailable`).
   */
  async end(requestId: string, reason: "completed" | "error" | "model_unavailable"): Promise<void> {
    expect(await this.c.call("turns.end", { sessionId: SESSION, requestId, reason })).toMatchObject({
      kind: "applied",
    });
  }

  /**
   * Pi ends the turn whose submit finished the run: the run may have ended first, and a run that
   * ends settles its open turns as lost, so the late end report is either applied or refused as such.
   */
  async endAfterLastSubmit(requestId: string): Promise<void> {
    const ended = await this.c.call("turns.end", { sessionId: SESSION, requestId, reason: "completed" });
    if (ended.kind === "applied") return;
    expect(ended).toMatchObject({
      kind: "conflict",
      evidence: { kind: "state_mismatch", resource: "turn", expected: "open", actual: "lost" },
    });
  }

  /** Pi crashed: the next Pi process settles the unproved open turn as lost. */
  async lose(): Promise<void> {
    expect(await this.c.call("turns.settle", { sessionId: SESSION })).toMatchObject({ kind: "applied" });
  }
}

async function openAskRun(): Promise<{ c: TestClient; runId: string; pi: FakeSession }> {
  host = await start(box);
  const c = await TestClient.connect(host.socketPath);
  client = c;
  await c.call("runs.subscribe", {});
  const flow = await writeWorkflow(box, "ask", ASK);
  const reserved = await c.call("runs.reserve", flow.reserve({}, { kind: "pi", sessionId: SESSION }));
  if (reserved.kind !== "applied") throw new Error(JSON.stringify(reserved));
  await c.call("session.settled", { sessionId: SESSION });
  return { c, runId: reserved.value.runId, pi: new FakeSession(c) };
}

describe("agent step turns through the host and a real worker", () => {
  it("never counts lost turns or provider errors against the reminder budget", async () => {
    const { c, runId, pi } = await openAskRun();
    const kinds: string[] = [];
    const play = async (end: "completed" | "error" | "lost") => {
      const turn = await pi.startTurn();
      kinds.push(turn.kind);
      if (end === "lost") await pi.lose();
      else await pi.end(turn.requestId, end);
    };
    // Two turns of every kind the model is not to blame for around each reminder: before the fix the
    // third turn end of any kind failed the step.
    await play("error");
    await play("lost");
    await play("completed");
    await play("lost");
    await play("error");
    await play("completed");
    const last = await pi.startTurn();
    kinds.push(last.kind);
    expect(await c.call("turns.submit", { sessionId: SESSION, output: { text: "hi" } })).toMatchObject({
      accepted: true,
    });
    await pi.endAfterLastSubmit(last.requestId);
    const done = await c.view(runId, (v) => v.status === "done");
    expect(done.outcome).toBe("completed");
    expect(kinds).toEqual([
      "step:1",
      "retry:1:1",
      "retry:1:2",
      "nudge:1:1",
      "retry:1:3",
      "retry:1:4",
      "nudge:1:2",
    ]);
  }, 60_000);

  it("parks the run (agent_turns_lost) after lost and errored turns in a row, and one resume finishes it", async () => {
    const { c, runId, pi } = await openAskRun();
    for (const end of ["lost", "error", "lost"] as const) {
      const turn = await pi.startTurn();
      if (end === "lost") await pi.lose();
      else await pi.end(turn.requestId, end);
    }
    const parked = await c.view(runId, (v) => v.status === "parked");
    expect(parked).toMatchObject({
      error: null,
      recoveryReason: { code: "agent_turns_lost", path: "draft" },
      currentWork: { kind: "none" },
    });
    expect(await c.call("runs.resume", { runId })).toMatchObject({ kind: "applied" });
    // The resumed visit is a new attempt: its step prompt comes again, and the model answers it.
    const turn = await pi.startTurn();
    expect(turn.kind).toBe("step:2");
    expect(await c.call("turns.submit", { sessionId: SESSION, output: { text: "hi" } })).toMatchObject({
      accepted: true,
    });
    await pi.endAfterLastSubmit(turn.requestId);
    const done = await c.view(runId, (v) => v.status === "done");
    expect(done.outcome).toBe("completed");
  }, 60_000);

  it("fails the step with model_unavailable at the first turn the provider refused for good, not after lost turns", async () => {
    const { c, runId, pi } = await openAskRun();
    const turn = await pi.startTurn();
    expect(turn.kind).toBe("step:1");
    await pi.end(turn.requestId, "model_unavailable");
    const failed = await c.view(runId, (v) => v.status === "failed");
    expect(failed).toMatchObject({
      outcome: "failed",
      recoveryReason: null,
      error: { code: "model_unavailable" },
    });
    expect(failed.error?.message).toContain(
      "Agent step draft: the provider refused the Pi session's model for good",
    );
    expect(failed.error?.message).toContain("/login");
  }, 60_000);
});
