import type { AgentSessionReport } from "@piw/protocol";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import {
  type AgentPlacement,
  agent,
  compileWorkflow,
  defineWorkflow,
  executeRun,
  type IsolatedAgentSession,
  MemoryRunPort,
} from "../src/index.js";
import { started } from "./memory-run.js";

const REPORT: AgentSessionReport = {
  model: "test/model",
  tokensIn: 0,
  tokensOut: 0,
  cost: null,
  durationMs: 1,
  transcript: [],
  transcriptOmitted: 0,
};

function oneStep(session: "conversation" | "isolated") {
  return compileWorkflow(
    defineWorkflow({
      name: "spend",
      startAt: "review",
      nodes: { review: agent({ prompt: "Review it.", output: z.string(), session }) },
      edges: { review: { to: "done" } },
    }),
  );
}

/**
 * An isolated session whose model replies 40 tokens each, for ever, without submitting: it reports
 * its usage after each reply as Pi's SDK session does, and stops (as the real one does) when told.
 */
function spendingSessions() {
  const calls = { replies: 0, closed: 0, aborted: false };
  const placement: AgentPlacement = {
    origin: { kind: "cli" },
    workingDir: null,
    isolated: {
      async open(step) {
        let stopped: ((event: { type: "budget_exceeded" }) => void) | undefined;
        const stop = new Promise<{ type: "budget_exceeded" }>((resolve) => {
          stopped = resolve;
        });
        const session: IsolatedAgentSession = {
          deliver: () => {
            void (async () => {
              while (!calls.aborted) {
                await new Promise((resolve) => setTimeout(resolve, 1));
                calls.replies += 1;
                if ((await step.usage?.({ tokens: 40 * calls.replies, usd: 0, turns: 1 })) === true) {
                  calls.aborted = true;
                  stopped?.({ type: "budget_exceeded" });
                }
              }
            })();
          },
          next: () => stop,
          close: async () => {
            calls.closed += 1;
            calls.aborted = true;
            return { ...REPORT, tokensIn: 40 * calls.replies, turns: 1 };
          },
        };
        return { ok: true, session };
      },
    },
  };
  return { placement, calls };
}

describe("budgets in agent steps", () => {
  it("parks a conversation step before its prompt is sent when the run's budget is spent", async () => {
    const port = started(new MemoryRunPort({ runId: "run-1" }));
    port.budget = { usd: 1 };
    port.spend = { usd: 1, tokens: 0, agentTurns: 2, wallMs: 0 };
    const outcome = await executeRun({ workflow: oneStep("conversation"), port });
    expect(outcome).toEqual({ kind: "parked", reason: "budget_exceeded" });
    expect(port.parkedReason).toMatchObject({ code: "budget_exceeded", limit: "usd", path: "review" });
    expect(port.messages).toEqual([]);
    // The visit stays open: a resume with a higher budget prompts again.
    expect(port.visits.find((v) => v.path === "review")?.status).toBe("running");
  });

  it("parks a conversation step when the host reports its turn reached the budget", async () => {
    const port = started(new MemoryRunPort({ runId: "run-2" }));
    port.budget = { tokens: 100 };
    const running = executeRun({ workflow: oneStep("conversation"), port });
    await new Promise((resolve) => setTimeout(resolve, 10));
    // What the host saw in the turn's usage, saved where the store's check finds it.
    port.spend = { usd: 0, tokens: 120, agentTurns: 1, wallMs: 0 };
    port.budgetReached();
    expect(await running).toEqual({ kind: "parked", reason: "budget_exceeded" });
    expect(port.parkedReason).toMatchObject({
      code: "budget_exceeded",
      limit: "tokens",
      spent: { tokens: 120 },
      budget: { tokens: 100 },
    });
    expect(port.messages).toHaveLength(1);
  });

  it("stops an isolated session at the reply that reaches the budget, saves its record, then parks", async () => {
    const port = started(new MemoryRunPort({ runId: "run-3" }));
    port.budget = { tokens: 100 };
    const fake = spendingSessions();
    const outcome = await executeRun({ workflow: oneStep("isolated"), port, agents: fake.placement });
    expect(outcome).toEqual({ kind: "parked", reason: "budget_exceeded" });
    expect(port.parkedReason).toMatchObject({
      code: "budget_exceeded",
      limit: "tokens",
      spent: { tokens: 120 },
    });
    // 40, 80, 120: the third reply reached 100 and no fourth call was made.
    expect(fake.calls.replies).toBe(3);
    const record = [...port.effects.values()].find((e) => e.visitKey === "review:1");
    expect(record?.state).toMatchObject({
      status: "settled",
      result: { ok: true, value: { ended: "budget_exceeded", tokensIn: 120 } },
    });
  });

  it("lets a step run when the budget has room", async () => {
    const port = started(new MemoryRunPort({ runId: "run-4" }));
    port.budget = { tokens: 1000, agentTurns: 5 };
    const running = executeRun({ workflow: oneStep("conversation"), port });
    port.submit("looks fine");
    expect(await running).toEqual({ kind: "completed", output: "looks fine" });
    expect(port.budgetChecks.map((c) => c.when)).toEqual(["before_turn"]);
  });
});
