import { afterEach, describe, expect, it } from "vitest";
import { isNotice, piwWorlds } from "@piw/test-kit";

// Its one step works until it is cancelled: the run stays running while the test acts on it.
const HOLD = `import { compute, defineWorkflow } from "piw";

export default defineWorkflow({
  name: "hold",
  startAt: "work",
  nodes: {
    work: compute({
      run: async ({ signal }) => {
        while (!signal.aborted) await new Promise((r) => setTimeout(r, 50));
        return { stopped: true };
      },
    }),
  },
  edges: { work: { to: "done" } },
});
`;

const worlds = piwWorlds();
afterEach(() => worlds.close());

describe("/workflow run verbs without a run ID in a real Pi session", () => {
  it("cancel with nothing active does nothing and says so; cancel while a run works cancels that run", async () => {
    const world = await worlds.start({ workflows: { hold: HOLD } });
    const { pi } = world;

    let since = pi.mark();
    await pi.prompt("/workflow cancel");
    await pi.waitForEvent(isNotice("has no active workflow run to cancel; nothing was done."), {
      since,
      timeoutMs: 30_000,
    });

    since = pi.mark();
    await pi.prompt("/workflow hold");
    const queued = await pi.waitForEvent(isNotice("queued (run"), { since, timeoutMs: 30_000 });
    const runId = /\(run ([^)]+)\)/.exec(String(queued.message))?.[1] as string;
    expect(runId).toBeDefined();
    await world.waitForRun(runId, (view) => view.status === "running", 30_000);

    since = pi.mark();
    await pi.prompt("/workflow cancel");
    await pi.waitForEvent(isNotice(`Run ${runId} cancelled.`), { since, timeoutMs: 30_000 });
    const cancelled = await world.waitForRun(runId, (view) => view.status === "cancelled", 30_000);
    expect(cancelled.outcome).toBe("cancelled");
    world.model.assertNoErrors();
  }, 120_000);
});
