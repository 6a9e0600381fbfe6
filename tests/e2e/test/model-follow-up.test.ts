import { afterEach, describe, expect, it } from "vitest";
import {
  lastMessageText,
  lastToolResultText,
  type ModelRequest,
  piwMessages,
  type PiwWorld,
  piwWorlds,
  queuedRunId,
  text,
  toolCall,
  whenLastMessageContains,
} from "@piw/test-kit";

// A compute node that throws with its input in the message: the saved error names only the class.
const breaksWorkflow = (
  notifyModel: string,
) => `import { compute, defineWorkflow, type NodeContext } from "piw";
import { z } from "zod";

export default defineWorkflow({
  name: "breaks",
  input: z.object({ task: z.string() }),
  startAt: "check",
  ${notifyModel}
  nodes: {
    check: compute({
      run: ({ input }: NodeContext<{ task: string }>) => {
        throw new Error(\`bad task \${input.task}\`);
      },
    }),
  },
  edges: { check: { to: "done" } },
});
`;

const loopWorkflow = `import { agent, defineWorkflow } from "piw";
import { z } from "zod";

export default defineWorkflow({
  name: "loop",
  startAt: "work",
  nodes: {
    work: agent({
      prompt: "LOOP-STEP: work on it, then submit { done: true }.",
      output: z.object({ done: z.boolean() }),
      timeoutMs: null,
    }),
  },
  edges: { work: { to: "done" } },
});
`;

const SECRET = "SECRET-TASK-7731";

const worlds = piwWorlds();
afterEach(() => worlds.close());

const lastIs = (needle: string) => (r: ModelRequest) => lastMessageText(r).includes(needle);

describe("the model hears how a run it started ended", () => {
  it("a failed run the model started gives it one follow-up turn with a bounded error, free of the input", async () => {
    const world = await worlds.start({ workflows: { breaks: breaksWorkflow("") } });
    const { model, pi } = world;
    model.reply(
      whenLastMessageContains(
        "START-BREAKS",
        toolCall("workflow", { action: "start", workflow: "breaks", task: SECRET }),
      ),
    );
    model.reply(whenLastMessageContains("queued (run", text("Queued.")));
    model.reply(whenLastMessageContains("Workflow breaks failed", text("FOLLOW-UP-SEEN: it failed.")));

    await pi.promptAndSettle("START-BREAKS");
    const queued = model.requests.find(lastIs("queued (run"));
    const runId = queuedRunId(lastMessageText(queued as ModelRequest));
    const failed = await world.waitForRun(runId, (view) => view.status === "failed", 60_000);
    expect(failed.outcome).toBe("failed");

    // The follow-up turn: the terminal message starts it, and the model answers it.
    await pi.waitForEvent((e) => e.type === "message_end" && JSON.stringify(e).includes("FOLLOW-UP-SEEN"), {
      timeoutMs: 60_000,
    });
    await pi.waitForIdle({ timeoutMs: 30_000 });
    const told = model.requests.filter(lastIs("Workflow breaks failed"));
    expect(told).toHaveLength(1);
    const body = lastMessageText(told[0] as ModelRequest);
    expect(body).toBe(
      `Workflow breaks failed (run ${runId}): [node_failed] Compute node check threw an Error. You started this run: tell the user what happened; start it again only if the cause is fixed or they ask you to.`,
    );
    expect(body).not.toContain(SECRET);
    const messages = await piwMessages(pi);
    expect(messages.filter((m) => m.details.kind === "terminal")).toHaveLength(1);
    model.assertNoErrors();
  }, 180_000);

  it("a cancel from outside aborts the step's turn, then one follow-up turn says the user cancelled it", async () => {
    const world = await worlds.start({ workflows: { loop: loopWorkflow } });
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
    model.reply(whenLastMessageContains("was cancelled by the user", text("FOLLOW-UP-SEEN: cancelled.")));

    await pi.promptAndSettle("please loop");
    const queued = model.requests.find(lastIs("queued (run"));
    const runId = queuedRunId(lastMessageText(queued as ModelRequest));
    await model.waitForRequest((r) => lastToolResultText(r)?.includes("tick") === true, 60_000);

    // `piw cancel` sends no `by`: the host takes it as a person's.
    const host = await world.host();
    expect(await host.call("runs.cancel", { runId })).toMatchObject({ kind: "applied" });
    await pi.waitForEvent(
      (e) => e.type === "agent_end" && JSON.stringify(e).includes('"stopReason":"aborted"'),
      { timeoutMs: 30_000 },
    );
    await pi.waitForEvent((e) => e.type === "message_end" && JSON.stringify(e).includes("FOLLOW-UP-SEEN"), {
      timeoutMs: 60_000,
    });
    await pi.waitForIdle({ timeoutMs: 30_000 });
    const told = model.requests.filter(lastIs("was cancelled by the user"));
    expect(told).toHaveLength(1);
    expect(lastMessageText(told[0] as ModelRequest)).toContain(
      `Workflow loop was cancelled by the user (run ${runId}).`,
    );
    model.assertNoErrors();
  }, 180_000);

  it("tells the model nothing when it cancelled the run itself, when a person started it, or when the workflow says not to", async () => {
    const world = await worlds.start({
      workflows: {
        loop: loopWorkflow,
        breaks: breaksWorkflow(""),
        quiet: breaksWorkflow("notifyModel: { onFailure: false },").replace(
          'name: "breaks"',
          'name: "quiet"',
        ),
      },
    });
    const { model, pi } = world;
    // Every turn here is one the test starts; any other request is a turn piw should not have started.
    model.reply(
      whenLastMessageContains("please loop", toolCall("workflow", { action: "start", workflow: "loop" })),
    );
    model.reply(whenLastMessageContains("queued (run", text("Queued.")));
    // In the step's own turn, the model decides to cancel its run.
    model.reply((r) => {
      const match = /LOOP-STEP[\s\S]*run (loop-[^)\s]+)\)/.exec(lastMessageText(r));
      return match ? toolCall("workflow", { action: "cancel", runId: match[1] }) : undefined;
    });
    model.reply(whenLastMessageContains("cancelled. Workflow loop run", text("Cancelled it.")));
    model.reply(
      whenLastMessageContains(
        "START-QUIET",
        toolCall("workflow", { action: "start", workflow: "quiet", task: "x" }),
      ),
    );
    model.reply(whenLastMessageContains("ARE-YOU-THERE", text("Here.")));

    // 1. The model cancels its own run.
    await pi.promptAndSettle("please loop");
    const loopRun = queuedRunId(lastMessageText(model.requests.find(lastIs("queued (run")) as ModelRequest));
    await world.waitForRun(loopRun, (view) => view.status === "cancelled", 60_000);
    await untilIdle(world);
    // Its terminal message is delivered after the terminal state, when the session is idle: wait for
    // it, so that it cannot arrive inside a turn this test starts next.
    await waitForTerminalMessage(world, loopRun);

    // 2. A person starts a run that fails.
    await pi.prompt("/workflow breaks from a person");
    await untilIdle(world);
    const personRun = await latestRunOf(world, "breaks");
    await world.waitForRun(personRun, (view) => view.status === "failed", 60_000);
    await waitForTerminalMessage(world, personRun);

    // 3. The model starts a run whose workflow turns failure notices off.
    await pi.promptAndSettle("START-QUIET");
    const quietRun = await latestRunOf(world, "quiet");
    await world.waitForRun(quietRun, (view) => view.status === "failed", 60_000);

    // Each run's terminal message reaches the session (the first two already have), and none of them
    // starts a turn.
    for (const runId of [loopRun, personRun, quietRun]) {
      await waitForTerminalMessage(world, runId);
    }
    await pi.promptAndSettle("ARE-YOU-THERE");
    const bodies = (await piwMessages(pi)).filter((m) => m.details.kind === "terminal").map((m) => m.text);
    expect(bodies).toEqual([
      `Workflow loop was cancelled (run ${loopRun}).`,
      `Workflow breaks failed (run ${personRun}): [node_failed] Compute node check threw an Error.`,
      `Workflow quiet failed (run ${quietRun}): [node_failed] Compute node check threw an Error.`,
    ]);
    for (const body of bodies) expect(model.requests.filter(lastIs(body))).toHaveLength(0);
    model.assertNoErrors();
  }, 240_000);
});

/** Until Pi reports no agent run (the step's turn that the cancel ended may still be finishing). */
async function untilIdle(world: PiwWorld): Promise<void> {
  for (let i = 0; i < 300; i += 1) {
    if (!(await world.pi.getState()).isStreaming) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error("Pi never became idle");
}

async function latestRunOf(world: PiwWorld, workflow: string): Promise<string> {
  const host = await world.host();
  const { sessionId } = (await world.pi.call({ type: "get_state" })) as { sessionId: string };
  for (let i = 0; i < 200; i += 1) {
    const runs = await host.call("runs.list", { sessionId, limit: 10 });
    const run = runs.find((r) => r.workflowName === workflow);
    if (run) return run.runId;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`no run of ${workflow} in this session`);
}

async function waitForTerminalMessage(world: PiwWorld, runId: string): Promise<void> {
  for (let i = 0; i < 300; i += 1) {
    const messages = await piwMessages(world.pi);
    if (messages.some((m) => m.details.runId === runId && m.details.kind === "terminal")) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`the terminal message of ${runId} never reached the session`);
}
