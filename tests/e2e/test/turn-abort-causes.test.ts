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
  whenToolResultContains,
} from "@piw/test-kit";

// The two causes of a stopped turn besides a deadline and a cancel: a pause, and a worker that
// loses its claim. The host decides (turn-abort.ts); the extension aborts the live Pi turn.

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

const worlds = piwWorlds();
afterEach(() => worlds.close());

const isAbortedEnd = (e: { type: string }) =>
  e.type === "agent_end" && JSON.stringify(e).includes('"stopReason":"aborted"');

/**
 * The model starts the loop; the step's first prompt gets a turn that never ends by itself (every
 * tool result asks for another slow command); any later prompt of the step is submitted at once.
 */
function scriptLoop(target: PiwWorld): { prompts: () => number } {
  const { model } = target;
  let prompts = 0;
  model.reply(
    whenLastMessageContains("please loop", toolCall("workflow", { action: "start", workflow: "loop" })),
  );
  model.reply(whenLastMessageContains("queued (run", text("Queued.")));
  model.reply((request) => {
    if (!lastMessageText(request).includes("LOOP-STEP")) return undefined;
    prompts += 1;
    return prompts === 1
      ? toolCall("bash", { command: "sleep 0.3; echo tick" })
      : toolCall("workflow", { action: "submit", output: { done: true } });
  });
  model.reply((request) =>
    lastToolResultText(request)?.includes("tick") === true
      ? toolCall("bash", { command: "sleep 0.3; echo tick" })
      : undefined,
  );
  model.reply(whenToolResultContains("Accepted", text("Submitted.")));
  model.reply(text("Noted."));
  return { prompts: () => prompts };
}

async function startLoop(target: PiwWorld): Promise<string> {
  await target.pi.promptAndSettle("please loop");
  const queued = target.model.requests.find((r) => lastMessageText(r).includes("queued (run"));
  const runId = queuedRunId(lastMessageText(queued as ModelRequest));
  // The model is busy in the step's turn: a few tool results came back.
  await target.model.waitForRequest((r) => lastToolResultText(r)?.includes("tick") === true, 60_000);
  return runId;
}

describe("a step's live turn in a real Pi session stops when", () => {
  it("its run is paused from outside: the turn is aborted, the run parks, and a resume prompts the step again", async () => {
    const world = await worlds.start({ workflows: { loop: loopWorkflow } });
    const script = scriptLoop(world);
    const { pi } = world;
    const runId = await startLoop(world);
    const host = await world.host();
    const since = pi.mark();
    expect(await host.call("runs.pause", { runId })).toMatchObject({ kind: "applied" });

    await pi.waitForEvent(isAbortedEnd, { since, timeoutMs: 30_000 });
    const parked = await world.waitForRun(runId, (view) => view.status === "parked", 30_000);
    expect(parked.paused).toBe(true);
    await pi.waitForIdle({ timeoutMs: 30_000 });
    expect(script.prompts()).toBe(1);

    // `piw resume`: the step is prompted again, and this time the model submits.
    expect((await host.call("runs.resume", { runId })).kind).toBe("applied");
    const done = await world.waitForRun(runId, (view) => view.status === "done", 60_000);
    expect(done.outcome).toBe("completed");
    expect(script.prompts()).toBe(2);
    const prompts = (await piwMessages(pi)).filter((m) => m.details.kind === "step_prompt");
    expect(prompts).toHaveLength(2);
    expect(prompts.every((m) => m.details.path === "work" && m.details.runId === runId)).toBe(true);
    world.model.assertNoErrors();
  }, 180_000);

  it("its worker loses the claim: the turn is aborted, and the relaunched worker prompts the step again", async () => {
    const world = await worlds.start({ workflows: { loop: loopWorkflow } });
    const script = scriptLoop(world);
    const { pi } = world;
    const runId = await startLoop(world);
    const host = await world.host();
    const status = await host.call("host.status", {});
    const worker = status.workers.find((w) => w.runId === runId);
    expect(worker?.pid).toBeTypeOf("number");

    // The worker dies mid-step: its claim is gone, the host relaunches the run under a new claim.
    const since = pi.mark();
    process.kill(worker?.pid as number, "SIGKILL");
    await pi.waitForEvent(isAbortedEnd, { since, timeoutMs: 60_000 });

    const done = await world.waitForRun(runId, (view) => view.status === "done", 90_000);
    expect(done.outcome).toBe("completed");
    expect(script.prompts()).toBe(2);
    // A crash retry of the unfinished visit keeps its number: the same step, prompted again.
    const prompts = (await piwMessages(pi)).filter((m) => m.details.kind === "step_prompt");
    expect(prompts.map((m) => [m.details.path, m.details.visit])).toEqual([
      ["work", 1],
      ["work", 1],
    ]);
    expect(prompts[1]?.text).toContain("attempt 2");
    world.model.assertNoErrors();
  }, 180_000);
});
