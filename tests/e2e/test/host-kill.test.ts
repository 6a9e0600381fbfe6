import type { RunView } from "@piw/protocol";
import { renderFooterStatus } from "@piw/viewer";
import { afterEach, describe, expect, it } from "vitest";
import {
  isAlive,
  lastMessage,
  lastMessageText,
  type ModelReply,
  type ModelRequest,
  type PiSession,
  piwMessages,
  type PiwWorld,
  piwWorlds,
  queuedRunId,
  text,
  toolCall,
} from "@piw/test-kit";

const NOTE = `import { agent, defineWorkflow, type NodeContext } from "piw";
import { z } from "zod";

export default defineWorkflow({
  name: "note",
  input: z.object({ task: z.string() }),
  startAt: "write",
  nodes: {
    write: agent({
      prompt: ({ input }: NodeContext<{ task: string }>) => \`NOTE-STEP for \${input.task}: submit { text: string }.\`,
      output: z.object({ text: z.string() }),
    }),
  },
  edges: { write: { to: "done" } },
});
`;

const worlds = piwWorlds();
afterEach(() => worlds.close());

/** Slow enough that the host can be killed while the model is still answering. */
const SLOW = { chunkSize: 8, delayMs: 150 };

/** A step prompt (either attempt) or a reminder to submit, as the last message the model sees. */
const isStepRequest = (r: ModelRequest) =>
  lastMessageText(r).includes("NOTE-STEP for the note") || lastMessageText(r).includes("is still open");

function lastStatusText(pi: PiSession): string | undefined {
  const statuses = pi.events.filter((e) => e.type === "extension_ui_request" && e.method === "setStatus");
  const last = statuses.at(-1);
  return last === undefined ? undefined : String(last.statusText);
}

/**
 * Wait until the footer status Pi last received is what `piw status` renders from the host's view
 * (the extension draws pushed views, so it catches up; a mismatch that lasts fails with both texts).
 */
async function expectWidgetMatchesHost(current: PiwWorld, runId: string): Promise<string> {
  const host = await current.host();
  const deadline = Date.now() + 15_000;
  let expected = "";
  let shown: string | undefined;
  for (;;) {
    const view = (await host.call("runs.get", { runId })) as RunView;
    expected = renderFooterStatus(view);
    shown = lastStatusText(current.pi);
    if (shown === expected || Date.now() > deadline) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  expect(shown, "the Pi footer status and piw status disagree").toBe(expected);
  return expected;
}

describe("the host is killed while an agent step waits for the model", () => {
  it("the extension brings a host back, the run resumes by the progress rule, and the widget agrees with piw status", async () => {
    const world = await worlds.start({ workflows: { note: NOTE } });
    const { model, pi } = world;
    let stepPrompts = 0;
    model.reply((r) =>
      lastMessageText(r).includes("please write the note")
        ? toolCall("workflow", { action: "start", workflow: "note", task: "the note" })
        : undefined,
    );
    model.reply((r) =>
      lastMessageText(r).includes("queued (run") ? text("QUEUED: it starts when I am done.") : undefined,
    );
    model.reply((r): ModelReply | undefined => {
      if (!isStepRequest(r)) return undefined;
      stepPrompts += 1;
      // The first prompt is answered slowly and without a submit: the host dies meanwhile.
      if (stepPrompts === 1) return text("THINKING: let me look at the note before I write it down.", SLOW);
      return {
        type: "tool_calls",
        text: "RESUMED: writing it now, after the interruption.",
        stream: SLOW,
        calls: [{ name: "workflow", arguments: { action: "submit", output: { text: "the note" } } }],
      };
    });
    model.reply((r) =>
      lastMessage(r)?.role === "tool" && lastMessageText(r).includes("Accepted: workflow step write")
        ? text("SUBMITTED.")
        : undefined,
    );

    await pi.promptAndSettle("please write the note");
    const queued = model.requests.find((r) => lastMessageText(r).includes("queued (run"));
    const runId = queuedRunId(lastMessageText(queued as ModelRequest));

    // The step prompt reached the model and the answer is streaming: the agent step waits for it.
    const firstStep = await model.waitForRequest(isStepRequest, 60_000);
    const waiting = await world.waitForRun(runId, (view) => view.nodes[0]?.state === "running", 30_000);
    expect(waiting.status).toBe("running");
    const oldPid = world.hostPid();
    expect(oldPid).toBeDefined();
    process.kill(oldPid as number, "SIGKILL");
    const killedAt = Date.now();
    while (isAlive(oldPid as number) && Date.now() - killedAt < 5_000)
      await new Promise((r) => setTimeout(r, 50));
    expect(isAlive(oldPid as number)).toBe(false);

    // The progress rule (docs/maintainers/rules.md): the worker died with its host after the run saved
    // progress since its launch (the step prompt was queued), so the new host parks it
    // `worker_lost` and relaunches it at once; the agent visit is retried: same visit, attempt 2.
    const resumed = await world.waitForRun(
      runId,
      (view) => view.status === "running" && view.nodes[0]?.attempt === 2,
      60_000,
    );
    expect(resumed.nodes.map((node) => [node.path, node.state, node.visits, node.attempt])).toEqual([
      ["write", "running", 1, 2],
    ]);
    expect(resumed.recoveryReason).toBeNull();
    const newPid = world.hostPid();
    expect(newPid).toBeDefined();
    expect(newPid).not.toBe(oldPid);

    // The retried visit sends its prompt again; the model answers it (slowly) with a submit.
    const secondStep = await model.waitForRequest(
      (r) => isStepRequest(r) && r.index > firstStep.index,
      60_000,
    );
    expect(lastMessage(secondStep)?.role).toBe("user");
    // Mid-answer: the run is running its step; Pi's footer shows what piw status shows.
    const midway = await expectWidgetMatchesHost(world, runId);
    expect(midway).toMatch(/^wf note \[running\]/);

    const done = await world.waitForRun(runId, (view) => view.status === "done", 60_000);
    expect(done.outcome).toBe("completed");
    expect(done.nodes.map((node) => [node.path, node.state, node.visits, node.attempt])).toEqual([
      ["write", "succeeded", 1, 2],
    ]);
    await pi.waitForEvent((e) => e.type === "message_end" && JSON.stringify(e).includes("SUBMITTED."), {
      timeoutMs: 30_000,
    });
    const final = await expectWidgetMatchesHost(world, runId);
    expect(final).toMatch(/^wf note \[completed\]/);

    // One prompt per attempt, each delivered once; no message twice. The terminal message is
    // delivered at the next idle boundary, after the submitting turn settles.
    let messages = await piwMessages(pi);
    const until = Date.now() + 15_000;
    while (!messages.some((m) => m.details.kind === "terminal") && Date.now() < until) {
      await new Promise((r) => setTimeout(r, 100));
      messages = await piwMessages(pi);
    }
    const prompts = messages
      .filter((m) => m.details.kind === "step_prompt")
      .map((m) => m.details.piwMessageId);
    expect(prompts).toEqual([`msg:${runId}:write:1:step:1`, `msg:${runId}:write:1:step:2`]);
    const ids = messages.map((m) => m.details.piwMessageId);
    expect(new Set(ids).size).toBe(ids.length);
    expect(messages.filter((m) => m.details.kind === "terminal").map((m) => m.text)).toEqual([
      `Workflow note completed (run ${runId}).`,
    ]);
    model.assertNoErrors();
  }, 120_000);
});
