import { join } from "node:path";
import { CRASH_BOUNDARIES, type CrashBoundary } from "@piw/worker/testing";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { isAlive, lines, waitFor } from "@piw/test-kit";
import { type Sandbox, sandbox, type TestClient, writeWorkflow } from "../host-fixture.js";
import {
  EFFECTS_FLOW,
  type EffectMode,
  effectEventCounts,
  HostProcess,
  idle,
  type Outcome,
  outcomeOf,
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

const completedAfterRelaunch = (sideEffects: number): Outcome => ({
  status: "done",
  why: "completed",
  sideEffects,
  launches: 2,
  parks: ["worker_lost"],
  effects: ["settled"],
});

const manualUnsettled = (sideEffects: number): Outcome => ({
  status: "parked",
  why: "manual_effect_unsettled",
  sideEffects,
  launches: 2,
  parks: ["worker_lost", "manual_effect_unsettled"],
  effects: ["reserved"],
});

/** Nothing ran before the host died, and the new host holds the lock: it is queued again (never-ran rule). */
const completedAfterRequeue: Outcome = {
  status: "done",
  why: "completed",
  sideEffects: 1,
  launches: 2,
  parks: [],
  effects: ["settled"],
};

/**
 * The next host judges the dead host's open launches at start-up. A run still `starting` (its worker
 * never accepted the command) goes back to `queued` and, as a CLI run, starts again; a run with progress
 * since its launch is relaunched, and the relaunch finishes it or parks it for a person.
 */
const expected: Record<CrashBoundary, Record<EffectMode, Outcome>> = {
  starting: { idempotent: completedAfterRequeue, manual: completedAfterRequeue },
  "before-effect-reserve": { idempotent: completedAfterRelaunch(1), manual: completedAfterRelaunch(1) },
  "after-effect-reserve": { idempotent: completedAfterRelaunch(1), manual: manualUnsettled(0) },
  "after-effect": { idempotent: completedAfterRelaunch(2), manual: manualUnsettled(1) },
  "after-effect-settle": { idempotent: completedAfterRelaunch(1), manual: completedAfterRelaunch(1) },
  "between-nodes": { idempotent: completedAfterRelaunch(1), manual: completedAfterRelaunch(1) },
  // One commit finished a node and opened the next: progress, so one relaunch, which finishes it.
  "after-advance": { idempotent: completedAfterRelaunch(1), manual: completedAfterRelaunch(1) },
};

/** Side effects already performed when the workers stand at the boundary and the host dies. */
const performedAtKill: Record<CrashBoundary, number> = {
  starting: 0,
  "before-effect-reserve": 0,
  "after-effect-reserve": 0,
  "after-effect": 1,
  "after-effect-settle": 1,
  "between-nodes": 0,
  "after-advance": 0,
};

const MODES = ["idempotent", "manual"] as const;

describe("kill -9 of the host while its workers stand at a durable boundary, then a restart", () => {
  it.each(CRASH_BOUNDARIES)(
    "%s",
    async (boundary) => {
      const marker = join(box.dir, "hanging");
      host = await HostProcess.start(box, { PIW_WORKER_HANG_AT: boundary, PIW_WORKER_HANG_MARKER: marker });
      let c = await host.connect();
      client = c;
      const flow = await writeWorkflow(box, "effects", EFFECTS_FLOW);
      const runs = {} as Record<EffectMode, { runId: string; log: string }>;
      for (const mode of MODES) {
        const log = join(box.dir, `${mode}.log`);
        const reserved = await c.call("runs.reserve", flow.reserve({ mode, log }));
        if (reserved.kind !== "applied") throw new Error(JSON.stringify(reserved));
        runs[mode] = { runId: reserved.value.runId, log };
      }
      // Both workers stand at the boundary (each wrote `<pid> <boundary>`).
      await waitFor("both workers to reach the boundary", () => lines(marker).length === 2, 30_000);
      const pids = lines(marker).map((line) => Number(line.split(" ")[0]));
      expect(lines(marker).map((line) => line.split(" ")[1])).toEqual([boundary, boundary]);
      for (const mode of MODES) expect(lines(runs[mode].log)).toHaveLength(performedAtKill[boundary]);

      c.close();
      await host.kill9();
      // The workers lose their channel with the host and exit on their own.
      await waitFor("the orphaned workers to exit", () => pids.every((pid) => !isAlive(pid)), 15_000);
      for (const mode of MODES) expect(lines(runs[mode].log)).toHaveLength(performedAtKill[boundary]);

      // The stale lock and socket are taken over; this host's workers do not hang.
      host = await HostProcess.start(box);
      c = await host.connect();
      client = c;
      for (const mode of MODES) await settledView(c, runs[mode].runId);
      await idle(c);
      c.close();
      client = undefined;
      await host.stop();
      host = undefined;

      for (const mode of MODES) {
        const { runId, log } = runs[mode];
        const want = expected[boundary][mode];
        const [outcome, counts] = readState(box, (store) => [
          outcomeOf(store, runId, log),
          effectEventCounts(store, runId),
        ]);
        expect({ mode, ...outcome }).toEqual({ mode, ...want });
        expect(counts).toEqual({
          reserved: want.effects.length,
          settled: want.effects.filter((s) => s === "settled").length,
        });
      }
    },
    120_000,
  );
});
