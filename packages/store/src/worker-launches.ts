import {
  adopted,
  applied,
  conflict,
  type Fence,
  type RunCommandType,
  type Transition,
  type WorkerExit,
  type WorkerExitDecision,
} from "@piw/protocol";
import { lostAgentAttempts } from "./agent-attempts.js";
import { isConflict, type StoreContext } from "./context.js";
import { lastAliveAt } from "./deadline-clock.js";
import type { LaunchRow } from "./rows.js";
import type { RunRow } from "./rows.js";
import { applyWorkerExitVerdict } from "./run-recovery.js";
import { updateRun } from "./run-writes.js";
import {
  decideWorkerExit,
  type LaunchRunStatus,
  savedDecision,
  type WorkerReport,
} from "./worker-exit-decision.js";

export interface LaunchRecord {
  launchId: string;
  runId: string;
  generation: number;
  commandType: RunCommandType;
  launchRevision: number;
  pid: number | null;
  exitDecision: WorkerExitDecision | null;
}

function mapLaunch(row: LaunchRow): LaunchRecord {
  return {
    launchId: row.launch_id,
    runId: row.run_id,
    generation: row.generation,
    commandType: row.command_type,
    launchRevision: row.launch_revision,
    pid: row.pid,
    exitDecision: row.exit_decision,
  };
}

/** Record that a worker was spawned for the current claim, with the progress it starts from. */
export function recordWorkerLaunch(
  ctx: StoreContext,
  fence: Fence,
  req: { launchId: string; commandType: RunCommandType; pid: number | null },
): Transition<LaunchRecord> {
  return ctx.tx(() => {
    const existing = ctx.selectRow("worker_launches", "WHERE launch_id = ?", req.launchId);
    if (existing) {
      return existing.run_id === fence.runId &&
        existing.generation === fence.generation &&
        existing.command_type === req.commandType
        ? adopted(mapLaunch(existing))
        : conflict({ kind: "request_mismatch", resource: "launch", id: req.launchId });
    }
    const row = ctx.fencedRun(fence);
    if (isConflict(row)) return conflict(row);
    if (row.status !== "starting" && row.status !== "running") {
      return conflict({
        kind: "state_mismatch",
        resource: "run",
        id: row.run_id,
        expected: "starting",
        actual: row.status,
      });
    }
    ctx
      .stmt(
        `INSERT INTO worker_launches (launch_id, run_id, generation, command_type, launch_revision, pid, started_at)
         VALUES (?, ?, ?, ?, ?, ?, ?)`,
      )
      .run(
        req.launchId,
        row.run_id,
        row.generation,
        req.commandType,
        row.progress_revision,
        req.pid,
        ctx.now(),
      );
    updateRun(
      ctx,
      row,
      { launch_revision: row.progress_revision },
      { type: "worker.launched", data: { launchId: req.launchId, command: req.commandType } },
    );
    return applied(mapLaunch(ctx.writtenRow("worker_launches", "WHERE launch_id = ?", req.launchId)));
  });
}

/**
 * Record how a worker ended and apply what `decideWorkerExit` makes of it (the progress rule): only a failure
 * the worker reported fails the run; a worker that vanished relaunches after progress and parks the
 * run otherwise, never to be relaunched until someone resumes it.
 */
export function recordWorkerExit(
  ctx: StoreContext,
  req: { launchId: string; exit: WorkerExit },
): Transition<{ launch: LaunchRecord; decision: WorkerExitDecision }> {
  return ctx.tx(() => {
    const launch = ctx.selectRow("worker_launches", "WHERE launch_id = ?", req.launchId);
    if (!launch) return conflict({ kind: "not_found", resource: "launch", id: req.launchId });
    if (launch.exit_decision !== null)
      return adopted({ launch: mapLaunch(launch), decision: launch.exit_decision });
    const run = ctx.getRunRow(launch.run_id);
    if (!run) return conflict({ kind: "not_found", resource: "run", id: launch.run_id });
    const { exit } = req;
    const runStatus = launchRunStatus(run, launch);
    const verdict = decideWorkerExit({
      command: launch.command_type,
      progressSinceLaunch: run.progress_revision > launch.launch_revision,
      report: reportOf(exit),
      runStatus,
      hostAlive: exit.kind !== "orphaned",
      lostAgentAttempts: runStatus === "moved_on" ? null : lostAgentAttempts(ctx, run.run_id),
    });
    // A worker that died with its host stopped when it was last known alive, not when a later host looks.
    const stoppedAt = exit.kind === "orphaned" ? lastAliveAt(launch, run) : ctx.now();
    applyWorkerExitVerdict(ctx, run, verdict, launch.launch_id, stoppedAt);
    const decision = savedDecision(verdict);
    const detail = exit.kind === "reported" ? (exit.error?.message ?? null) : exit.detail;
    ctx
      .stmt(
        `UPDATE worker_launches SET exit_kind = ?, exit_phase = ?, exit_code = ?, exit_message = ?, exit_decision = ?, ended_at = ?
         WHERE launch_id = ?`,
      )
      .run(
        exit.kind,
        exit.kind === "reported" ? exit.phase : null,
        exit.kind === "reported" ? (exit.error?.code ?? null) : null,
        detail,
        decision,
        ctx.now(),
        launch.launch_id,
      );
    // A verdict on a run that held the claim recorded its own event; one that moved on gets this one.
    if (runStatus === "moved_on")
      updateRun(ctx, run, {}, { type: "worker.exited", data: { launchId: launch.launch_id, decision } });
    const saved = ctx.writtenRow("worker_launches", "WHERE launch_id = ?", launch.launch_id);
    return applied({ launch: mapLaunch(saved), decision });
  });
}

/** Launches that never reported an exit: after a host restart these workers are gone. */
export function listOpenLaunches(ctx: StoreContext): LaunchRecord[] {
  return ctx.read(() =>
    ctx.selectRows("worker_launches", "WHERE exit_decision IS NULL ORDER BY started_at").map(mapLaunch),
  );
}

/** Whether the run still holds the launch's claim, and in which status; anything else has moved on. */
function launchRunStatus(run: RunRow, launch: LaunchRow): LaunchRunStatus {
  if (run.generation !== launch.generation) return "moved_on";
  switch (run.status) {
    case "starting":
    case "running":
      return run.status;
    case "queued":
    case "parked":
    case "done":
    case "failed":
    case "cancelled":
      return "moved_on";
    default:
      return run.status satisfies never;
  }
}

function reportOf(exit: WorkerExit): WorkerReport {
  switch (exit.kind) {
    case "reported":
      return exit.error ? { kind: "failure", error: exit.error } : { kind: "clean" };
    case "lost":
    case "orphaned":
      return { kind: "none" };
    default:
      return exit satisfies never;
  }
}
