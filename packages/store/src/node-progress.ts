import {
  applied,
  conflict,
  type Fence,
  type NodeProgressReport,
  type ProgressState,
  type Transition,
} from "@piw/protocol";
import { isTransition, runningRun, type StoreContext } from "./context.js";
import type { TableRow } from "./table-columns.js";

/** One saved reading of `done`, for the ETA: when it was saved and how much was done then. */
interface ProgressSample {
  at: number;
  done: number;
}

/** The saved progress of one running node visit's attempt. */
export interface NodeProgressRecord {
  path: string;
  visit: number;
  attempt: number;
  state: ProgressState;
  /** The first saved reading of the attempt and the latest ones, oldest first (PROGRESS_SAMPLES_MAX). */
  samples: ProgressSample[];
  /** How many times this attempt's progress was saved. */
  saves: number;
  firstAt: number;
  updatedAt: number;
}

/** How many readings a visit keeps: the first (the rate's baseline) and the latest others. */
export const PROGRESS_SAMPLES_MAX = 16;

/** One row of `run_progress`. Stays inside the store. */
type ProgressRow = TableRow<"run_progress">;

function mapProgressRow(row: ProgressRow): NodeProgressRecord {
  return {
    path: row.path,
    visit: row.visit,
    attempt: row.attempt,
    state: {
      done: row.done,
      total: row.total,
      message: row.message,
      ...(row.eta === null ? {} : { eta: row.eta }),
      ...(row.scope === "run" ? { scope: "run" as const } : {}),
    },
    samples: (JSON.parse(row.samples) as [number, number][]).map(([at, done]) => ({ at, done })),
    saves: row.saves,
    firstAt: row.first_at,
    updatedAt: row.updated_at,
  };
}

/** The readings after this one is added: a new attempt or a `done` that went back starts over. */
function nextSamples(
  previous: NodeProgressRecord | null,
  req: NodeProgressReport,
  now: number,
): ProgressSample[] {
  const lastDone = previous?.samples.at(-1)?.done;
  const kept =
    previous === null ||
    previous.attempt !== req.attempt ||
    (req.state.done !== null && lastDone !== undefined && req.state.done < lastDone)
      ? []
      : previous.samples;
  if (req.state.done === null) return kept;
  const samples = [...kept, { at: now, done: req.state.done }];
  // Keep the baseline, drop the oldest of the rest.
  return samples.length <= PROGRESS_SAMPLES_MAX
    ? samples
    : [samples[0] as ProgressSample, ...samples.slice(-(PROGRESS_SAMPLES_MAX - 1))];
}

function readRow(ctx: StoreContext, runId: string, path: string, visit: number): NodeProgressRecord | null {
  const row = ctx.selectRow(
    "run_progress",
    "WHERE run_id = ? AND path = ? AND visit = ?",
    runId,
    path,
    visit,
  );
  return row ? mapProgressRow(row) : null;
}

/**
 * Save the latest progress of a running visit's attempt (one row per visit, replaced). Only the
 * claim's own worker (or the host for the step its turn runs) may, and only while that attempt
 * runs: a finished visit, another attempt or a stale claim is a conflict and changes nothing. This
 * is not a run change: no revision, no trace event.
 */
export function saveNodeProgress(
  ctx: StoreContext,
  fence: Fence,
  req: NodeProgressReport,
): Transition<NodeProgressRecord> {
  return ctx.tx(() => {
    const run = runningRun(ctx, fence);
    if (isTransition(run)) return run;
    const step = ctx
      .stmt("SELECT status, attempt FROM run_steps WHERE run_id = ? AND path = ? AND visit = ?")
      .get(run.run_id, req.path, req.visit) as { status: string; attempt: number } | undefined;
    if (step?.status !== "running" || step.attempt !== req.attempt) {
      return conflict({
        kind: "state_mismatch",
        resource: "step",
        id: `${run.run_id}:${req.path}:${req.visit}`,
        expected: `running attempt ${req.attempt}`,
        actual: step ? `${step.status} attempt ${step.attempt}` : "not started",
      });
    }
    const now = ctx.now();
    // The newest run-wide report replaces the older ones of other visits (one row per run shows).
    if (req.state.scope === "run") {
      ctx
        .stmt("DELETE FROM run_progress WHERE run_id = ? AND scope = 'run' AND NOT (path = ? AND visit = ?)")
        .run(run.run_id, req.path, req.visit);
    }
    const previous = readRow(ctx, run.run_id, req.path, req.visit);
    const samples = nextSamples(previous, req, now);
    const same = previous !== null && previous.attempt === req.attempt;
    const record: NodeProgressRecord = {
      path: req.path,
      visit: req.visit,
      attempt: req.attempt,
      state: req.state,
      samples,
      saves: same ? previous.saves + 1 : 1,
      firstAt: same ? previous.firstAt : now,
      updatedAt: now,
    };
    ctx
      .stmt(
        `INSERT INTO run_progress (run_id, path, visit, attempt, done, total, message, eta, scope, samples, saves, first_at, updated_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
         ON CONFLICT (run_id, path, visit) DO UPDATE SET attempt = excluded.attempt, done = excluded.done,
           total = excluded.total, message = excluded.message, eta = excluded.eta, scope = excluded.scope,
           samples = excluded.samples,
           saves = excluded.saves, first_at = excluded.first_at, updated_at = excluded.updated_at`,
      )
      .run(
        run.run_id,
        req.path,
        req.visit,
        req.attempt,
        req.state.done,
        req.state.total,
        req.state.message,
        req.state.eta ?? null,
        req.state.scope ?? "step",
        JSON.stringify(samples.map((s) => [s.at, s.done])),
        record.saves,
        record.firstAt,
        now,
      );
    return applied(record);
  });
}

/**
 * The saved progress of the run's open visits. A visit reopened after a crash keeps its previous
 * attempt's progress until the new attempt reports its own.
 */
export function listNodeProgress(ctx: StoreContext, runId: string): NodeProgressRecord[] {
  return ctx.read(() =>
    ctx
      .selectRows(
        "run_progress",
        `JOIN run_steps s ON s.run_id = run_progress.run_id AND s.path = run_progress.path AND s.visit = run_progress.visit
         WHERE run_progress.run_id = ? AND s.status = 'running' ORDER BY run_progress.path, run_progress.visit`,
        runId,
      )
      .map(mapProgressRow),
  );
}

/**
 * The run's latest run-wide progress (`scope: "run"`), whether or not the visit that reported it
 * still runs: what a parked run shows until the next report or its end.
 */
export function readRunProgress(ctx: StoreContext, runId: string): NodeProgressRecord | null {
  return ctx.read(() => {
    const row = ctx.selectRow(
      "run_progress",
      "WHERE run_id = ? AND scope = 'run' ORDER BY updated_at DESC LIMIT 1",
      runId,
    );
    return row ? mapProgressRow(row) : null;
  });
}

/**
 * A visit finished: its step progress goes with it, a run-wide report stays for the run (inside
 * the caller's transaction).
 */
export function dropVisitProgress(ctx: StoreContext, runId: string, path: string, visit: number): void {
  ctx
    .stmt("DELETE FROM run_progress WHERE run_id = ? AND path = ? AND visit = ? AND scope = 'step'")
    .run(runId, path, visit);
}

/** A run ended: nothing of it runs any more (inside the caller's transaction). */
export function dropRunProgress(ctx: StoreContext, runId: string): void {
  ctx.stmt("DELETE FROM run_progress WHERE run_id = ?").run(runId);
}
