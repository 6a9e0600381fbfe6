import { afterEach, describe, expect, it } from "vitest";
import {
  lastMessageText,
  piwMessages,
  piwWorlds,
  queuedRunId,
  text,
  toolCall,
  waitFor,
  whenLastMessageContains,
} from "@piw/test-kit";

const ASK = `import { agent, defineWorkflow } from "piw";
import { z } from "zod";

export default defineWorkflow({
  name: "ask",
  startAt: "question",
  nodes: {
    question: agent({
      prompt: () => "ASK-STEP: answer the question and submit { answer: string }.",
      output: z.object({ answer: z.string() }),
    }),
  },
  edges: { question: { to: "done" } },
});
`;

const worlds = piwWorlds();
afterEach(() => worlds.close());

describe("Escape during an agent step", () => {
  it("pauses the run; /workflow resume re-delivers the step; cancel ends it; a later plain prompt owns no step", async () => {
    const world = await worlds.start({ workflows: { ask: ASK } });
    const { model, pi } = world;
    let runId = "";
    model.reply(
      whenLastMessageContains("start ask", toolCall("workflow", { action: "start", workflow: "ask" })),
    );
    model.reply(whenLastMessageContains("queued (run", text("Queued.")));
    // The first delivery streams slowly, so Escape lands in the middle of the step's turn.
    model.replyOnce(
      whenLastMessageContains(
        "ASK-STEP",
        text("Let me think about this at length. ".repeat(20), { chunkSize: 8, delayMs: 100 }),
      ),
    );
    // The re-delivered step: the model cancels the run instead of answering.
    model.reply((request) =>
      lastMessageText(request).includes("ASK-STEP")
        ? toolCall("workflow", { action: "cancel", runId })
        : undefined,
    );
    model.reply(whenLastMessageContains("cancelled", text("The run is cancelled.")));
    model.reply(
      whenLastMessageContains(
        "plain question",
        toolCall("workflow", { action: "submit", output: { answer: "x" } }),
      ),
    );
    model.reply(whenLastMessageContains("No workflow step owns this turn", text("Nothing to submit.")));

    await pi.promptAndSettle("start ask");
    const started = model.requests.find((r) => lastMessageText(r).includes("queued (run"));
    runId = queuedRunId(lastMessageText(started as NonNullable<typeof started>));

    // The step prompt starts a streamed turn; Escape (RPC abort) interrupts it.
    await model.waitForRequest((r) => lastMessageText(r).includes("ASK-STEP"), 30_000);
    await pi.waitForEvent((e) => e.type === "message_update", { timeoutMs: 30_000 });
    await pi.abort();
    const parked = await world.waitForRun(runId, (view) => view.status === "parked", 30_000);
    expect(parked.recoveryReason?.code).toBe("paused");
    // The open visit is not running any more (nothing works on it) and was never finished: it was paused.
    expect(parked.nodes[0]).toMatchObject({ path: "question", state: "paused", visits: 1 });

    // Resume from the command line: the step prompt is delivered again and the model acts on it.
    const since = pi.mark();
    await pi.prompt(`/workflow resume ${runId}`);
    const cancelled = await world.waitForRun(runId, (view) => view.status === "cancelled", 30_000);
    expect(cancelled.outcome).toBe("cancelled");
    await pi.waitForIdle({ since, timeoutMs: 30_000 });
    const stepPrompts = (await piwMessages(pi)).filter((m) => m.details.kind === "step_prompt");
    expect(stepPrompts).toHaveLength(2);
    expect(new Set(stepPrompts.map((m) => m.details.piwMessageId)).size).toBe(2);

    // A later ordinary prompt is not a workflow turn: a submission from it is refused.
    const host = await world.host();
    await waitFor("the run's terminal message", async () =>
      (await piwMessages(pi)).some((m) => m.details.kind === "terminal"),
    );
    const revision = (await host.call("runs.get", { runId }))?.revision;
    await pi.promptAndSettle("a plain question");
    const refusal = model.requests.find((r) =>
      lastMessageText(r).includes("No workflow step owns this turn"),
    );
    expect(refusal).toBeDefined();
    const after = await host.call("runs.get", { runId });
    expect(after?.status).toBe("cancelled");
    // The plain turn changed nothing about the run.
    expect(after?.revision).toBe(revision);
    model.assertNoErrors();
  }, 120_000);
});
