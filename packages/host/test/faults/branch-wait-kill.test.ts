import { join } from "node:path";
import type { StepRecord } from "@piw/store";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { isAlive, waitFor } from "@piw/test-kit";
import { pidIn, type Sandbox, sandbox, type TestClient, writeWorkflow } from "../host-fixture.js";
import { HostProcess, readState } from "./fault-fixture.js";

const WAIT_MS = 3_000;

/**
 * A parallel node: `pause` waits 3 s while `slow` runs on. On its first attempt `slow` writes its
 * worker's pid and hangs, so the run never parks: the wait's due time is saved only by `visit.schedule`.
 */
const BRANCH_WAIT_FLOW = `import { existsSync, writeFileSync } from "node:fs";
import { type ActionContext, action, defineWorkflow, parallel, wait } from "piw";
import { z } from "zod";

export default defineWorkflow({
  name: "branch-wait",
  input: z.object({ pidFile: z.string() }),
  startAt: "fan",
  nodes: {
    fan: parallel({
      branches: {
        pause: wait({ ms: ${WAIT_MS} }),
        slow: action({
          run: async ({ input }: ActionContext<{ pidFile: string }>) => {
            if (!existsSync(input.pidFile)) {
              writeFileSync(input.pidFile, String(process.pid));
              await new Promise(() => {});
            }
            return "slow done";
          },
        }),
      },
      join: "all",
    }),
  },
  edges: { fan: { to: "done" } },
});
`;

const PAUSE = "fan/pause/pause";

let box: Sandbox;
let host: HostProcess | undefined;
let client: TestClient | undefined;
beforeEach(() => {
  box = sandbox();
});
afterEach(async () => {
  client?.close();
  await host?.kill9();
  host = undefined;
  box.cleanup();
});

/** The wait branch's first visit as the store has it now (read beside the running host). */
function pauseStep(runId: string): StepRecord | undefined {
  return readState(box, (store) => store.listRunSteps(runId).find((s) => s.path === PAUSE && s.visit === 1));
}

describe("a branch's wait beside a running sibling", () => {
  it("keeps the due time it saved when the host is killed during the wait", async () => {
    host = await HostProcess.start(box);
    const first = await host.connect();
    const flow = await writeWorkflow(box, "branch-wait", BRANCH_WAIT_FLOW);
    const pidFile = join(box.dir, "worker.pid");
    const reserved = await first.call("runs.reserve", flow.reserve({ pidFile }));
    if (reserved.kind !== "applied") throw new Error(JSON.stringify(reserved));
    const { runId } = reserved.value;
    const workerPid = await waitFor("the slow branch to hang", () => pidIn(pidFile));

    // The run is not parked (`slow` runs), so only the branch's own schedule saves its due time.
    const saved = await waitFor("the wait's due time to be saved", () => {
      const step = pauseStep(runId);
      return step?.dueAt != null ? step : undefined;
    });
    expect(saved.status).toBe("running");
    expect(saved.dueAt).toBeGreaterThanOrEqual(saved.startedAt + WAIT_MS);
    expect(readState(box, (store) => store.getRun(runId)?.status)).toBe("running");

    first.close();
    await host.kill9();
    await waitFor("the orphaned worker to exit", () => !isAlive(workerPid), 20_000);
    host = await HostProcess.start(box);
    const c = await host.connect();
    client = c;
    const view = await c.view(runId, (v) => v.status === "done" || v.status === "failed", 60_000);
    expect(view.status).toBe("done");
    // The relaunched wait ended at the time saved before the kill, not 3 s after its reopening.
    expect(view.output).toEqual({
      kind: "json",
      value: { pause: { until: new Date(saved.dueAt ?? 0).toISOString() }, slow: "slow done" },
    });
    await host.stop();
    host = undefined;
    const after = pauseStep(runId);
    expect(after).toMatchObject({ status: "succeeded", attempt: 2, dueAt: saved.dueAt });
  }, 120_000);
});
