import { afterEach, describe, expect, it } from "vitest";
import {
  lastMessageText,
  piwWorlds,
  queuedRunId,
  text,
  toolCall,
  whenLastMessageContains,
} from "@piw/test-kit";

const MIXED = `import { agent, defineWorkflow } from "piw";
import { z } from "zod";

export default defineWorkflow({
  name: "mixed",
  input: z.object({ task: z.string() }),
  startAt: "plan",
  nodes: {
    plan: agent({
      prompt: "PLAN-STEP: submit { steps: string[] }.",
      output: z.object({ steps: z.array(z.string()).min(1) }),
    }),
    check: agent({
      session: "isolated",
      prompt: "CHECK-STEP: submit { ok: boolean }.",
      output: z.object({ ok: z.boolean() }),
    }),
  },
  edges: { plan: { to: "check" }, check: { to: "done" } },
});
`;

/** A reply that streams for about three seconds: the step stays open while the test looks at it. */
const slowly = () => text("working ".repeat(30), { chunkSize: 8, delayMs: 100 });

const worlds = piwWorlds();
afterEach(() => worlds.close());

describe("progress from agent steps in a real Pi session", () => {
  it("shows a conversation step's and an isolated step's update in the run view, and refuses one outside a step", async () => {
    const world = await worlds.start({ workflows: { mixed: MIXED } });
    const { model, pi } = world;
    // Before any step owns the turn, an update is refused; the model then starts the run.
    model.reply(whenLastMessageContains("please plan", toolCall("workflow", { action: "update", done: 1 })));
    model.reply(
      whenLastMessageContains(
        "No workflow step owns this turn",
        toolCall("workflow", { action: "start", workflow: "mixed", task: "t" }),
      ),
    );
    model.reply(whenLastMessageContains("queued (run", text("Queued.")));
    model.reply(
      whenLastMessageContains(
        "PLAN-STEP",
        toolCall("workflow", { action: "update", done: 1, total: 4, message: "planning" }),
      ),
    );
    model.reply(whenLastMessageContains("Progress of workflow step plan updated", slowly()));
    model.reply(
      whenLastMessageContains(
        "Workflow step plan is still open",
        toolCall("workflow", { action: "submit", output: { steps: ["a"] } }),
      ),
    );
    model.reply(whenLastMessageContains("Accepted: workflow step plan", text("Plan submitted.")));
    // The isolated step's own session has the same tool, bound to its step.
    model.reply(
      whenLastMessageContains(
        "CHECK-STEP",
        toolCall("workflow", { action: "update", done: 3, total: 4, message: "checking" }),
      ),
    );
    model.reply(whenLastMessageContains("Progress of check updated", slowly()));
    model.reply(
      whenLastMessageContains(
        "Workflow step check is still open",
        toolCall("workflow", { action: "submit", output: { ok: true } }),
      ),
    );
    model.reply(whenLastMessageContains("Final output", text("All done.")));

    const planned = pi.promptAndSettle("please plan");
    const startedRequest = await model.waitForRequest(
      (r) => lastMessageText(r).includes("queued (run"),
      60_000,
    );
    const runId = queuedRunId(lastMessageText(startedRequest));
    const refusal = model.requests.find((r) =>
      lastMessageText(r).includes("No workflow step owns this turn"),
    );
    expect(lastMessageText(refusal as NonNullable<typeof refusal>)).toContain(
      "update only while running a workflow step",
    );

    const planning = await world.waitForRun(
      runId,
      (view) => view.progress?.some((p) => p.path === "plan") === true,
      60_000,
    );
    expect(planning.progress).toEqual([
      {
        path: "plan",
        visit: 1,
        done: 1,
        total: 4,
        message: "planning",
        updatedAt: expect.any(Number),
        // One reading has no rate yet.
        eta: null,
      },
    ]);
    expect(planning.nodes.find((n) => n.path === "plan")?.state).toBe("running");

    const checking = await world.waitForRun(
      runId,
      (view) => view.progress?.some((p) => p.path === "check") === true,
      90_000,
    );
    // The conversation step's progress went with its visit; the isolated step's is its own.
    expect(checking.progress).toEqual([
      {
        path: "check",
        visit: 1,
        done: 3,
        total: 4,
        message: "checking",
        updatedAt: expect.any(Number),
        eta: null,
      },
    ]);

    const done = await world.waitForRun(runId, (view) => view.status === "done", 90_000);
    expect(done.outcome).toBe("completed");
    expect(done.progress).toBeUndefined();
    await planned;
    model.assertNoErrors();
  }, 180_000);
});
