import { afterEach, describe, expect, it } from "vitest";
import {
  lastMessageText,
  lastToolResultText,
  type PiwWorld,
  piwWorlds,
  queuedRunId,
  text,
  toolCall,
  whenLastMessageContains,
} from "@piw/test-kit";

const DEADLINE_MS = 4_000;

const loopWorkflow = (timeoutMs: string) => `import { agent, defineWorkflow } from "piw";
import { z } from "zod";

export default defineWorkflow({
  name: "loop",
  startAt: "work",
  nodes: {
    work: agent({
      prompt: "LOOP-STEP: work on it, then submit { done: true }.",
      output: z.object({ done: z.boolean() }),
      timeoutMs: ${timeoutMs},
    }),
  },
  edges: { work: { to: "done" } },
});
`;

/** The follow-up turn that tells the model how its run ended: it starts, and settles. */
async function waitForFollowUp(pi: PiwWorld["pi"], says: string): Promise<void> {
  await pi.waitForEvent(
    (e) =>
      e.type === "message_start" &&
      (e.message as { role?: string; content?: unknown } | undefined)?.role === "custom" &&
      JSON.stringify(e).includes(says),
    { timeoutMs: 60_000 },
  );
  await pi.waitForIdle({ timeoutMs: 30_000 });
}

const worlds = piwWorlds();
afterEach(() => worlds.close());

describe("a step deadline in a real Pi session", () => {
  it("aborts a model that keeps calling tools, ends the run timed_out, and refuses a late submit", async () => {
    const world = await worlds.start({ workflows: { loop: loopWorkflow(String(DEADLINE_MS)) } });
    const { model, pi } = world;
    model.reply(
      whenLastMessageContains("please loop", toolCall("workflow", { action: "start", workflow: "loop" })),
    );
    model.reply(whenLastMessageContains("queued (run", text("Queued.")));
    // The step's turn never ends by itself: every tool result asks for another slow command.
    let toolCallsInStep = 0;
    model.reply((request) => {
      const fromStep = lastMessageText(request).includes("LOOP-STEP");
      const fromTool = lastToolResultText(request)?.includes("tick") === true;
      if (!fromStep && !fromTool) return undefined;
      toolCallsInStep += 1;
      return toolCall("bash", { command: "sleep 0.3; echo tick" });
    });
    model.reply(
      whenLastMessageContains(
        "submit it now",
        toolCall("workflow", { action: "submit", output: { done: true } }),
      ),
    );
    model.reply(whenLastMessageContains("It takes no more submissions", text("Too late, then.")));
    // Anything else piw says (the run's terminal message) gets a plain answer.
    model.reply(text("Noted."));

    await pi.promptAndSettle("please loop");
    const started = model.requests.find((r) => lastMessageText(r).includes("queued (run"));
    const runId = queuedRunId(lastMessageText(started as NonNullable<typeof started>));

    // The host aborts the live turn at the deadline: Pi ends that agent run as aborted.
    const aborted = await pi.waitForEvent(
      (e) => e.type === "agent_end" && JSON.stringify(e).includes('"stopReason":"aborted"'),
      { timeoutMs: 60_000 },
    );
    expect(aborted).toBeDefined();
    const ended = await world.waitForRun(runId, (view) => view.status === "failed", 30_000);
    expect(ended.outcome).toBe("timed_out");
    expect(ended.error).toEqual({
      code: "node_timed_out",
      message: `Step work timed out after ${DEADLINE_MS} ms.`,
    });
    expect(ended.nodes.map((n) => [n.path, n.state])).toEqual([["work", "timed_out"]]);
    // The model was working until the deadline: the turn was cut, it did not end on its own.
    expect(toolCallsInStep).toBeGreaterThan(1);
    // The model started the run, so one follow-up turn tells it that the run timed out.
    await waitForFollowUp(pi, `Workflow loop timed out (run ${runId})`);

    // A later submit is refused with the reason, and changes nothing.
    const host = await world.host();
    const revision = (await host.call("runs.get", { runId }))?.revision;
    await pi.promptAndSettle("submit it now");
    const refusal = model.requests.find((r) => lastMessageText(r).includes("It takes no more submissions"));
    expect(lastMessageText(refusal as NonNullable<typeof refusal>)).toContain(
      `Step work timed out after ${DEADLINE_MS} ms.`,
    );
    const after = await host.call("runs.get", { runId });
    expect(after?.status).toBe("failed");
    expect(after?.paused).toBe(false);
    expect(after?.revision).toBe(revision);
    model.assertNoErrors();
  }, 120_000);

  it("aborts the live turn of a step without a deadline when its run is cancelled from outside", async () => {
    const world = await worlds.start({ workflows: { loop: loopWorkflow("null") } });
    const { model, pi } = world;
    model.reply(
      whenLastMessageContains("please loop", toolCall("workflow", { action: "start", workflow: "loop" })),
    );
    model.reply(whenLastMessageContains("queued (run", text("Queued.")));
    model.reply((request) => {
      const fromStep = lastMessageText(request).includes("LOOP-STEP");
      const fromTool = lastToolResultText(request)?.includes("tick") === true;
      return fromStep || fromTool ? toolCall("bash", { command: "sleep 0.3; echo tick" }) : undefined;
    });
    model.reply(text("Noted."));

    await pi.promptAndSettle("please loop");
    const started = model.requests.find((r) => lastMessageText(r).includes("queued (run"));
    const runId = queuedRunId(lastMessageText(started as NonNullable<typeof started>));
    // The model is busy in the step's turn (a few tool results came back); no deadline will stop it.
    await model.waitForRequest((r) => lastToolResultText(r)?.includes("tick") === true, 30_000);
    const running = await world.waitForRun(runId, (view) => view.status === "running", 30_000);
    expect(running.nodes[0]).toMatchObject({ path: "work", state: "running" });
    expect(running.nodes[0]?.deadlineAt ?? null).toBeNull();

    const host = await world.host();
    expect(await host.call("runs.cancel", { runId })).toMatchObject({ kind: "applied" });
    await pi.waitForEvent(
      (e) => e.type === "agent_end" && JSON.stringify(e).includes('"stopReason":"aborted"'),
      { timeoutMs: 30_000 },
    );
    const cancelled = await world.waitForRun(runId, (view) => view.status === "cancelled", 30_000);
    expect(cancelled.outcome).toBe("cancelled");
    await waitForFollowUp(pi, `Workflow loop was cancelled by the user (run ${runId})`);
    model.assertNoErrors();
  }, 120_000);
});
