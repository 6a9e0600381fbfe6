import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type Sandbox, sandbox, type TestClient, writeWorkflow } from "../host-fixture.js";
import {
  eventTypes,
  HostProcess,
  idle,
  launchCount,
  parkReasons,
  piw,
  readState,
  settledView,
} from "./fault-fixture.js";

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

/** How long a parked run is watched for a relaunch that must not come. */
const NO_RELAUNCH_WATCH_MS = 3_000;

/**
 * Kills its own worker while the workflow module loads (bootstrap, after the command was accepted and
 * before any node ran) for as long as the flag file exists. The source stays the same throughout.
 */
function bootstrapCrashFlow(flag: string): string {
  return `import { existsSync } from "node:fs";
import { compute, defineWorkflow } from "piw";

if (existsSync(${JSON.stringify(flag)})) process.kill(process.pid, "SIGKILL");

export default defineWorkflow({
  name: "boot",
  startAt: "first",
  nodes: { first: compute({ run: () => "ran" }) },
  edges: { first: { to: "done" } },
});
`;
}

async function watchLaunches(h: HostProcess, runId: string, ms: number): Promise<number[]> {
  const seen: number[] = [];
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    seen.push(h.launches(runId));
    await new Promise((r) => setTimeout(r, 100));
  }
  return [...new Set(seen)];
}

describe("a worker that crashes during bootstrap on the same revision", () => {
  it("is launched once, parks with its reason shown by piw status, and only an explicit resume relaunches it", async () => {
    const flag = join(box.dir, "crash-while-this-exists");
    // Compiled (in this process, as the CLI's preflight would) before the flag exists.
    const flow = await writeWorkflow(box, "boot", bootstrapCrashFlow(flag));
    writeFileSync(flag, "");
    host = await HostProcess.start(box);
    const c = await host.connect();
    client = c;
    const reserved = await c.call("runs.reserve", flow.reserve(null));
    if (reserved.kind !== "applied") throw new Error(JSON.stringify(reserved));
    const { runId } = reserved.value;

    const parked = await settledView(c, runId);
    expect(parked).toMatchObject({
      status: "parked",
      recoveryReason: { code: "worker_lost_no_progress" },
      currentWork: { kind: "none" },
    });
    expect(parked.nodes.map((n) => [n.path, n.state])).toEqual([["first", "pending"]]);
    // No retry loop: the launch count stays 1 while nobody acts.
    expect(await watchLaunches(host, runId, NO_RELAUNCH_WATCH_MS)).toEqual([1]);
    expect((await c.call("host.status", {})).workers).toEqual([]);

    const status = await piw(box, ["status", runId]);
    expect(status.code).toBe(0);
    expect(status.stdout).toMatch(/^status +‼ parked$/m);
    expect(status.stdout).toMatch(
      /^recovery +The worker stopped without saving progress since it was launched; resume the run after fixing the cause\. \(worker_lost_no_progress\)$/m,
    );
    const json = JSON.parse((await piw(box, ["status", runId, "--json"])).stdout) as { status: string };
    expect(json.status).toBe("parked");

    // An explicit resume relaunches it exactly once; the cause is still there, so it parks again.
    const again = await piw(box, ["resume", runId]);
    expect(again.code).toBe(5);
    expect(again.stdout).toContain("worker_lost_no_progress");
    expect(await watchLaunches(host, runId, NO_RELAUNCH_WATCH_MS)).toEqual([2]);

    // With the cause fixed, the next resume completes it.
    rmSync(flag);
    const resumed = await piw(box, ["resume", runId]);
    expect(resumed.code).toBe(0);
    expect(host.launches(runId)).toBe(3);
    await idle(c);
    c.close();
    client = undefined;
    await host.stop();
    host = undefined;

    readState(box, (store) => {
      expect(store.getRun(runId)).toMatchObject({ status: "done", outcome: "completed" });
      expect(launchCount(store, runId)).toBe(3);
      expect(parkReasons(store, runId)).toEqual(["worker_lost_no_progress", "worker_lost_no_progress"]);
      // The first node ran once, in the third worker.
      expect(eventTypes(store, runId).filter((t) => t === "node.started")).toHaveLength(1);
    });
  }, 90_000);

  it("dying before it accepts its command (PIW_WORKER_CRASH_AT=starting) parks the run once, with no relaunch, and it stays resumable", async () => {
    const flow = await writeWorkflow(box, "boot", bootstrapCrashFlow(join(box.dir, "never-created")));
    // No once-file: every worker of this host would die at the boundary.
    host = await HostProcess.start(box, { PIW_WORKER_CRASH_AT: "starting" });
    const c = await host.connect();
    client = c;
    const reserved = await c.call("runs.reserve", flow.reserve(null));
    if (reserved.kind !== "applied") throw new Error(JSON.stringify(reserved));
    const { runId } = reserved.value;

    const parked = await settledView(c, runId);
    expect(parked).toMatchObject({
      status: "parked",
      error: null,
      recoveryReason: { code: "worker_lost_no_progress" },
    });
    expect(await watchLaunches(host, runId, NO_RELAUNCH_WATCH_MS)).toEqual([1]);
    const status = await piw(box, ["status", runId]);
    expect(status.stdout).toMatch(/^status +‼ parked$/m);
    expect(status.stdout).toMatch(
      /^recovery +The worker stopped before it accepted its start command; resume the run to launch it again\. \(worker_lost_no_progress\)$/m,
    );
    // A vanished process never fails a run: resume launches it again (here it dies again, and parks).
    c.views.length = 0;
    expect(await c.call("runs.resume", { runId })).toMatchObject({ kind: "applied" });
    await c.view(runId, (v) => v.status === "parked");
    expect(await watchLaunches(host, runId, NO_RELAUNCH_WATCH_MS)).toEqual([2]);
  }, 60_000);
});
