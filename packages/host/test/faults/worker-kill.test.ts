import { rmSync } from "node:fs";
import { join } from "node:path";
import { CRASH_BOUNDARIES, type CrashBoundary } from "@piw/worker/testing";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
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

/** Died before accepting its command: parked with its reason (never failed), and one resume finishes it. */
const completedAfterResume: Outcome = {
  status: "done",
  why: "completed",
  sideEffects: 1,
  launches: 2,
  parks: ["worker_lost_no_progress"],
  effects: ["settled"],
};

/**
 * Parked for a person. Resuming alone is refused; the person says the effect did not happen, so the
 * resumed run performs it (once more than before) under a fresh reservation and finishes.
 */
const manualResolved = (sideEffectsBefore: number): Outcome => ({
  status: "done",
  why: "completed",
  sideEffects: sideEffectsBefore + 1,
  launches: 3,
  parks: ["worker_lost", "manual_effect_unsettled"],
  effects: ["settled"],
});

/**
 * The progress rule: a worker that dies before it accepted its command parks the run without a
 * relaunch (a vanished process never fails a run), and one explicit resume finishes it; one that dies
 * after the run saved progress is relaunched once (the once-file lets the relaunch live), and the
 * relaunch finishes the run or parks it for a person.
 */
const expected: Record<CrashBoundary, Record<EffectMode, Outcome>> = {
  starting: { idempotent: completedAfterResume, manual: completedAfterResume },
  "before-effect-reserve": { idempotent: completedAfterRelaunch(1), manual: completedAfterRelaunch(1) },
  // Reserved, not yet performed: idempotent performs it now, once; manual cannot know, so it parks.
  "after-effect-reserve": { idempotent: completedAfterRelaunch(1), manual: manualResolved(0) },
  // Performed, never settled: idempotent performs it again under the same identity (one row).
  "after-effect": { idempotent: completedAfterRelaunch(2), manual: manualResolved(1) },
  // A settled effect is never performed again.
  "after-effect-settle": { idempotent: completedAfterRelaunch(1), manual: completedAfterRelaunch(1) },
  "between-nodes": { idempotent: completedAfterRelaunch(1), manual: completedAfterRelaunch(1) },
  // One commit finished a node and opened the next: progress, so one relaunch, which finishes it.
  "after-advance": { idempotent: completedAfterRelaunch(1), manual: completedAfterRelaunch(1) },
};

async function runToRest(c: TestClient, mode: EffectMode): Promise<{ runId: string; log: string }> {
  const flow = await writeWorkflow(box, "effects", EFFECTS_FLOW);
  const log = join(box.dir, `${mode}.log`);
  const reserved = await c.call("runs.reserve", flow.reserve({ mode, log }));
  if (reserved.kind !== "applied") throw new Error(JSON.stringify(reserved));
  const { runId } = reserved.value;
  await settledView(c, runId);
  await idle(c);
  return { runId, log };
}

describe("kill -9 of a worker at each durable boundary, supervised by a live host binary", () => {
  it.each(CRASH_BOUNDARIES)(
    "%s",
    async (boundary) => {
      const onceFile = join(box.dir, "crashed-once");
      host = await HostProcess.start(box, {
        PIW_WORKER_CRASH_AT: boundary,
        PIW_WORKER_CRASH_ONCE_FILE: onceFile,
      });
      const c = await host.connect();
      client = c;
      const idempotent = await runToRest(c, "idempotent");
      // Removing the once-file arms the hook again for the next worker that reaches the boundary.
      rmSync(onceFile);
      const runs: Record<EffectMode, { runId: string; log: string }> = {
        idempotent,
        manual: await runToRest(c, "manual"),
      };
      expect(host.log()).toContain(`PIW_WORKER_CRASH_AT=${boundary}: killing myself`);

      // A run parked without progress waits for one explicit resume; the once-file now lets it live.
      for (const { runId } of Object.values(runs)) {
        const run = await c.call("runs.get", { runId });
        if (run?.status !== "parked" || run.recoveryReason?.code !== "worker_lost_no_progress") continue;
        c.views.length = 0;
        expect(await c.call("runs.resume", { runId })).toMatchObject({ kind: "applied" });
        await c.view(runId, (v) => v.status === "done");
        await idle(c);
      }

      const manual = await c.call("runs.get", { runId: runs.manual.runId });
      let resolved = false;
      if (manual?.status === "parked") {
        const reason = manual.recoveryReason;
        if (reason?.code !== "manual_effect_unsettled") throw new Error(`parked for ${reason?.code}`);
        // Only a person knows whether the effect happened: a bare resume is refused and changes nothing.
        expect(await c.call("runs.resume", { runId: runs.manual.runId })).toMatchObject({
          kind: "conflict",
          evidence: { kind: "state_mismatch", resource: "effect", id: reason.effectId },
        });
        c.views.length = 0;
        const answered = await c.call("runs.resolveEffect", {
          runId: runs.manual.runId,
          effectId: reason.effectId,
          happened: false,
        });
        expect(answered).toMatchObject({ kind: "applied" });
        await c.view(runs.manual.runId, (v) => v.status === "done");
        await idle(c);
        resolved = true;
      }
      c.close();
      client = undefined;
      await host.stop();
      host = undefined;

      for (const mode of ["idempotent", "manual"] as const) {
        const { runId, log } = runs[mode];
        const want = expected[boundary][mode];
        const [outcome, counts] = readState(box, (store) => [
          outcomeOf(store, runId, log),
          effectEventCounts(store, runId),
        ]);
        expect({ mode, ...outcome }).toEqual({ mode, ...want });
        expect(counts).toEqual({
          // A reservation the person declared not performed was dropped; the resume reserved anew.
          reserved: want.effects.length + (mode === "manual" && resolved ? 1 : 0),
          settled: want.effects.filter((s) => s === "settled").length,
        });
      }
    },
    120_000,
  );
});
