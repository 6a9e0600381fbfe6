import {
  lastMessageText,
  type ModelReply,
  type ModelRequest,
  piwWorlds,
  queuedRunId,
  text,
  toolCall,
  waitFor,
} from "@piw/test-kit";
import { afterEach, describe, expect, it } from "vitest";

// Three isolated agent steps side by side. Each spends SPENDS replies (a tool call, no submission)
// before it submits: 90 tokens alone, under the run's limit of 100; together they pass it.
const FAN = `import { agent, defineWorkflow, parallel } from "piw";
import { z } from "zod";

const branch = (name: string) =>
  agent({
    session: "isolated",
    prompt: \`BRANCH-\${name}: submit { ok: boolean }.\`,
    output: z.object({ ok: z.boolean() }),
  });

export default defineWorkflow({
  name: "fan",
  input: z.object({ task: z.string() }),
  startAt: "fan",
  nodes: {
    fan: parallel({ branches: { a: branch("A"), b: branch("B"), c: branch("C") }, join: "all" }),
  },
  edges: { fan: { to: "done" } },
});
`;

/** Every reply of the fake model reports 15 tokens (10 in, 5 out). */
const TOKENS_PER_REPLY = 15;
const SPENDS = 5;
const LIMIT = 100;
const BRANCHES = ["A", "B", "C"] as const;

// A conversation step beside an isolated one, under one limit of 100 tokens.
const MIX = `import { agent, defineWorkflow, parallel } from "piw";
import { z } from "zod";

export default defineWorkflow({
  name: "mix",
  input: z.object({ task: z.string() }),
  startAt: "fan",
  nodes: {
    fan: parallel({
      branches: {
        conv: agent({ prompt: "MIX-CONV: submit { ok: boolean }.", output: z.object({ ok: z.boolean() }) }),
        iso: agent({
          session: "isolated",
          prompt: "MIX-ISO: submit { ok: boolean }.",
          output: z.object({ ok: z.boolean() }),
        }),
      },
      join: "all",
    }),
  },
  edges: { fan: { to: "done" } },
});
`;

const worlds = piwWorlds();
afterEach(() => worlds.close());

const has = (request: ModelRequest, needle: string) => JSON.stringify(request.messages).includes(needle);
const repliesIn = (request: ModelRequest) => request.messages.filter((m) => m.role === "assistant").length;

const branchOf = (request: ModelRequest) =>
  BRANCHES.find((name) => JSON.stringify(request.messages).includes(`BRANCH-${name}`));

describe("a budget over parallel branches", () => {
  it("parks the run when the branches' usage together reaches the limit, stops every branch's session, and finishes after a raised resume", async () => {
    const world = await worlds.start({ workflows: { fan: FAN } });
    const { model, pi } = world;
    let mode: "spend" | "finish" = "spend";
    // Each branch's first reply waits until all three sessions called the model: they all run
    // before any spends, so no branch can finish on its own before the limit is reached.
    const started = new Set<string>();
    let allStarted: () => void = () => {};
    const allStartedNow = new Promise<void>((resolve) => {
      allStarted = resolve;
    });
    model.reply((request): ModelReply | undefined => {
      const name = branchOf(request);
      if (name === undefined) return undefined;
      if (mode === "finish") return toolCall("workflow", { action: "submit", output: { ok: true } });
      const replied = request.messages.filter((m) => m.role === "assistant").length;
      if (replied >= SPENDS) return toolCall("workflow", { action: "submit", output: { ok: true } });
      if (replied > 0) return toolCall("ls", { path: "." });
      started.add(name);
      if (started.size === BRANCHES.length) allStarted();
      return {
        type: "tool_calls",
        text: "Looking.",
        calls: [{ name: "ls", arguments: { path: "." } }],
        stream: { holdAfter: { chars: 1, until: allStartedNow } },
      };
    });
    model.reply((request) =>
      lastMessageText(request).includes("please start")
        ? toolCall("workflow", { action: "start", workflow: "fan", task: "t", budget: `tokens=${LIMIT}` })
        : undefined,
    );
    model.reply((request) =>
      lastMessageText(request).includes("queued (run") ? text("Queued.") : undefined,
    );
    model.reply(text("Noted."));

    await pi.promptAndSettle("please start");
    const queued = model.requests.find((r) => lastMessageText(r).includes("queued (run"));
    const runId = queuedRunId(lastMessageText(queued as NonNullable<typeof queued>));

    const parked = await world.waitForRun(runId, (view) => view.status === "parked", 90_000);
    expect(parked.recoveryReason).toMatchObject({
      code: "budget_exceeded",
      limit: "tokens",
      budget: { tokens: LIMIT },
    });
    // The bound: the reply that reached the limit, and at most one call in flight in each other
    // running branch. Every stopped session's record is saved, so all of it is counted.
    const spent = parked.spend?.tokens ?? 0;
    expect(spent).toBeGreaterThanOrEqual(LIMIT);
    expect(spent).toBeLessThan(LIMIT + BRANCHES.length * TOKENS_PER_REPLY);
    const reason = parked.recoveryReason;
    const reasonSpent = reason?.code === "budget_exceeded" ? reason.spent.tokens : 0;
    expect(reasonSpent).toBeGreaterThanOrEqual(LIMIT);
    expect(reasonSpent).toBeLessThanOrEqual(spent);
    // No branch submitted; every branch's visit stays open for the resumed attempt.
    const branchPaths = ["fan/a/a", "fan/b/b", "fan/c/c"];
    for (const path of branchPaths) {
      expect(parked.nodes.find((n) => n.path === path)).toMatchObject({ state: "pending", visits: 1 });
    }
    // Every branch's session was stopped before its step ended, and its record was saved.
    const host = await world.host();
    const history = await host.call("runs.history", { runId });
    const sessions = (history?.effects ?? []).filter((e) => e.effectType === "agent.session");
    expect(sessions.map((s) => s.path).sort()).toEqual(branchPaths);
    for (const session of sessions) {
      expect(session.status).toBe("settled");
      expect(["budget_exceeded", "cancelled"]).toContain((session.result as { ended?: string }).ended);
    }
    const submits = model.requests.filter(
      (r) => branchOf(r) !== undefined && r.messages.filter((m) => m.role === "assistant").length >= SPENDS,
    );
    expect(submits).toEqual([]);

    // A raised resume: each branch's step runs again in a new session and submits.
    mode = "finish";
    const resumed = await host.call("runs.resume", { runId, budget: { tokens: 1_000 } });
    expect(resumed.kind).toBe("applied");
    const done = await world.waitForRun(runId, (view) => view.status === "done", 90_000);
    expect(done.outcome).toBe("completed");
    expect(done.spend?.tokens).toBeGreaterThanOrEqual(spent + BRANCHES.length * TOKENS_PER_REPLY);
    model.assertNoErrors();
  }, 240_000);

  it("stops a conversation step at the limit that its replies reach with an isolated branch's unsaved usage", async () => {
    const world = await worlds.start({ workflows: { mix: MIX } });
    const { model, pi } = world;
    let mode: "spend" | "finish" = "spend";
    const ISO_SPENDS = 4;
    // The isolated session spends 60 tokens, then its next call waits (in flight) until the run parks;
    // its usage is not saved meanwhile. The conversation starts spending only then.
    let release: () => void = () => {};
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    const isoWaiting = model.waitForRequest(
      (r) => has(r, "MIX-ISO") && !has(r, "MIX-CONV") && repliesIn(r) >= ISO_SPENDS,
      90_000,
    );
    const convSpent: number[] = [];
    model.reply((request): ModelReply | undefined => {
      if (!has(request, "MIX-ISO") || has(request, "MIX-CONV")) return undefined;
      if (mode === "finish") return toolCall("workflow", { action: "submit", output: { ok: true } });
      if (repliesIn(request) < ISO_SPENDS) return toolCall("ls", { path: "." });
      return {
        type: "tool_calls",
        text: "Still looking.",
        calls: [{ name: "ls", arguments: { path: "." } }],
        stream: { holdAfter: { chars: 1, until: released } },
      };
    });
    model.reply((request) =>
      lastMessageText(request).includes("please start")
        ? toolCall("workflow", { action: "start", workflow: "mix", task: "t", budget: `tokens=${LIMIT}` })
        : undefined,
    );
    model.reply((request) =>
      lastMessageText(request).includes("queued (run") ? text("Queued.") : undefined,
    );
    model.reply((request): ModelReply | undefined => {
      if (!has(request, "MIX-CONV")) return undefined;
      const last = lastMessageText(request);
      if (mode === "finish") {
        if (last.includes("MIX-CONV"))
          return toolCall("workflow", { action: "submit", output: { ok: true } });
        return text("Done here.");
      }
      convSpent.push(request.index);
      if (convSpent.length > 1) return toolCall("workflow", { action: "status" });
      return {
        type: "tool_calls",
        text: "Checking.",
        calls: [{ name: "workflow", arguments: { action: "status" } }],
        stream: { holdAfter: { chars: 1, until: isoWaiting } },
      };
    });
    model.reply(text("Noted."));

    await pi.promptAndSettle("please start");
    const queued = model.requests.find((r) => lastMessageText(r).includes("queued (run"));
    const runId = queuedRunId(lastMessageText(queued as NonNullable<typeof queued>));

    const parked = await world.waitForRun(runId, (view) => view.status === "parked", 90_000);
    release();
    // 60 unsaved in the isolated session: the conversation's third reply (45) reaches 100.
    expect(parked.recoveryReason).toMatchObject({
      code: "budget_exceeded",
      path: "fan/conv/conv",
      limit: "tokens",
      spent: { tokens: ISO_SPENDS * TOKENS_PER_REPLY + 3 * TOKENS_PER_REPLY },
    });
    expect(convSpent).toHaveLength(3);
    // The isolated branch stops after the park: its session closes with its call in flight, and
    // its record, saved then, counts in the run's spend.
    const host = await world.host();
    const session = await waitFor("the isolated session's record", async () => {
      const history = await host.call("runs.history", { runId });
      return history?.effects.find((e) => e.effectType === "agent.session" && e.status === "settled");
    });
    expect(["budget_exceeded", "cancelled"]).toContain((session.result as { ended?: string }).ended);
    const [listed] = await host.call("runs.list", { limit: 1 });
    const spent = listed?.spend?.tokens ?? 0;
    expect(spent).toBeGreaterThanOrEqual(LIMIT);
    expect(spent).toBeLessThan(LIMIT + 2 * TOKENS_PER_REPLY);
    const history = await host.call("runs.history", { runId });
    expect(history?.turns.filter((t) => t.status === "open")).toEqual([]);

    mode = "finish";
    const resumed = await host.call("runs.resume", { runId, budget: { tokens: 1_000 } });
    expect(resumed.kind).toBe("applied");
    const done = await world.waitForRun(runId, (view) => view.status === "done", 90_000);
    expect(done.outcome).toBe("completed");
    model.assertNoErrors();
  }, 240_000);
});
