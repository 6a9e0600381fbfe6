import { afterEach, describe, expect, it } from "vitest";
import { lastMessageText, type ModelRequest, piwWorlds, queuedRunId, text, toolCall } from "@piw/test-kit";

// One conversation step, then one isolated step. The model never submits while the test lets it
// spend: every reply of the fake model reports 15 tokens (10 in, 5 out).
const SPEND = `import { agent, defineWorkflow } from "piw";
import { z } from "zod";

export default defineWorkflow({
  name: "spend",
  input: z.object({ task: z.string() }),
  startAt: "conv",
  nodes: {
    conv: agent({ prompt: "CONV-STEP: submit { ok: boolean }.", output: z.object({ ok: z.boolean() }) }),
    iso: agent({
      session: "isolated",
      prompt: "ISO-STEP: submit { ok: boolean }.",
      output: z.object({ ok: z.boolean() }),
    }),
  },
  edges: { conv: { to: "iso" }, iso: { to: "done" } },
});
`;

const TOKENS_PER_REPLY = 15;

const worlds = piwWorlds();
afterEach(() => worlds.close());

const has = (request: ModelRequest, needle: string) => JSON.stringify(request.messages).includes(needle);

describe("a run with a budget", () => {
  it("parks at its limit in a conversation step and in an isolated step, and finishes after raised resumes", async () => {
    const world = await worlds.start({ workflows: { spend: SPEND } });
    const { model, pi } = world;
    // What the model does in each step: spend (call a tool, never submit) or finish (submit).
    let conv: "spend" | "finish" = "spend";
    let iso: "spend" | "finish" = "spend";
    const convSpent: number[] = [];
    const isoSpent: number[] = [];
    // The isolated session's context is fresh: only its own step prompt is in it.
    model.reply((request) => {
      if (!has(request, "ISO-STEP") || has(request, "CONV-STEP")) return undefined;
      if (iso === "finish") return toolCall("workflow", { action: "submit", output: { ok: true } });
      isoSpent.push(request.index);
      return toolCall("ls", { path: "." });
    });
    model.reply((request) =>
      lastMessageText(request).includes("please start")
        ? toolCall("workflow", { action: "start", workflow: "spend", task: "t", budget: "tokens=40" })
        : undefined,
    );
    model.reply((request) =>
      lastMessageText(request).includes("queued (run") ? text("Queued.") : undefined,
    );
    model.reply((request) => {
      if (!has(request, "CONV-STEP")) return undefined;
      const last = lastMessageText(request);
      if (conv === "finish") {
        if (last.includes("CONV-STEP"))
          return toolCall("workflow", { action: "submit", output: { ok: true } });
        return text("Done here.");
      }
      convSpent.push(request.index);
      return toolCall("workflow", { action: "status" });
    });
    model.reply(text("Noted."));

    await pi.promptAndSettle("please start");
    const started = model.requests.find((r) => lastMessageText(r).includes("queued (run"));
    const runId = queuedRunId(lastMessageText(started as NonNullable<typeof started>));

    // The conversation step: 15, 30, 45 tokens; the reply that reached 40 was the last one made.
    const first = await world.waitForRun(runId, (view) => view.status === "parked", 60_000);
    expect(first.recoveryReason).toMatchObject({
      code: "budget_exceeded",
      path: "conv",
      limit: "tokens",
      budget: { tokens: 40 },
      spent: { tokens: 3 * TOKENS_PER_REPLY, agentTurns: 1 },
    });
    expect(convSpent).toHaveLength(3);
    expect(first.budget).toEqual({ tokens: 40 });
    expect(first.spend?.tokens).toBe(3 * TOKENS_PER_REPLY);
    // The step's visit stays open, with nobody working on it, for the resumed attempt.
    expect(first.nodes.find((n) => n.path === "conv")).toMatchObject({ state: "pending", visits: 1 });

    // A raised resume from Pi: the step is prompted again and the model submits (2 replies, 30
    // tokens: 75 in all). The isolated step then spends 15 a reply until the run reaches 150.
    conv = "finish";
    await pi.prompt(`/workflow resume ${runId} --budget tokens=150`);
    const second = await world.waitForRun(
      runId,
      (view) => view.status === "parked" && view.recoveryReason?.code === "budget_exceeded",
      90_000,
    );
    expect(second.recoveryReason).toMatchObject({ code: "budget_exceeded", path: "iso", limit: "tokens" });
    const spent = second.spend?.tokens ?? 0;
    // At the limit, and never past it by more than the one reply that reached it.
    expect(spent).toBeGreaterThanOrEqual(150);
    expect(spent).toBeLessThan(150 + TOKENS_PER_REPLY);
    expect(isoSpent.length).toBe((spent - 75) / TOKENS_PER_REPLY);
    expect(second.nodes.map((n) => [n.path, n.state, n.visits])).toEqual([
      ["conv", "succeeded", 1],
      ["iso", "pending", 1],
    ]);

    // A raised resume from a shell's client: the isolated step runs again and submits.
    iso = "finish";
    const host = await world.host();
    const resumed = await host.call("runs.resume", { runId, budget: { tokens: 1_000_000 } });
    expect(resumed.kind).toBe("applied");
    const done = await world.waitForRun(runId, (view) => view.status === "done", 90_000);
    expect(done.outcome).toBe("completed");
    expect(done.budget).toEqual({ tokens: 1_000_000 });
    // Every run in the list carries its total spend.
    const [listed] = await host.call("runs.list", { limit: 1 });
    expect(listed?.runId).toBe(runId);
    expect(listed?.spend?.tokens).toBeGreaterThan(spent);
    model.assertNoErrors();
  }, 240_000);
});
