import type { RunSummary } from "@piw/protocol";
import type { SoakContext } from "./context.js";
import { checkCancelled, checkCompleted, type LedgerLine, type RunCheck, readLedger } from "./invariants.js";
import { onClock, type SoakRun, type SoakTally, TERMINAL } from "./tally.js";

function ledgerOf(ledger: string, run: SoakRun): LedgerLine[] {
  return readLedger(ledger).lines.filter((line) => line.tag === run.tag);
}

function record(tally: SoakTally, run: SoakRun, end: string, check: RunCheck): void {
  run.checked = true;
  run.ended = end;
  tally.figures.effectExecutions += check.executions;
  tally.figures.settledEffectsReExecuted += check.reExecuted;
  if (check.problems.length > 0) tally.violations.push(`${run.runId}: ${check.problems.join("; ")}`);
}

/** Look at every run once: check completed ones, note failures, resume parked ones if asked. */
export async function sweep(soak: SoakContext, resumeParked: boolean): Promise<RunSummary[]> {
  const { host, tally } = soak;
  const { figures, violations } = tally;
  const ledger = soak.scratch.ledger;
  const list = await host.call("runs.list", { limit: 1000 });
  if (list === undefined) return [];
  for (const summary of list) {
    const run = tally.runs.get(summary.runId);
    if (run === undefined) continue;
    const end = `${summary.status}/${summary.outcome}`;
    if (run.ended !== undefined && run.ended !== end)
      violations.push(`${run.runId} ended ${run.ended}, then was ${end}`);
    if (run.checked) continue;
    if (summary.status !== "parked") delete run.parkedSeenAt;
    if (summary.status === "done" && summary.outcome === "completed") {
      const view = await host.call("runs.get", { runId: run.runId });
      const history = await host.call("runs.history", { runId: run.runId });
      if (view && history) {
        if (run.cancel?.repliedAt !== undefined && run.cancel.repliedAt !== null) {
          violations.push(`${run.runId} completed after its cancel was applied`);
        }
        record(tally, run, end, checkCompleted(run.workflow.expected, view, history, ledgerOf(ledger, run)));
        run.completed = true;
        if (run.workflow.kind === "parallel") figures.parallelCompleted += 1;
        if (run.workflow.kind === "map") figures.mapCompleted += 1;
      }
    } else if (summary.status === "cancelled" && run.cancel !== undefined) {
      const history = await host.call("runs.history", { runId: run.runId });
      if (history) {
        record(tally, run, end, checkCancelled(history, ledgerOf(ledger, run), run.cancel.repliedAt));
        figures.runsCancelled += 1;
      }
    } else if (TERMINAL.has(summary.status)) {
      run.checked = true;
      run.ended = end;
      violations.push(
        `${run.runId} ended ${summary.status}/${summary.outcome}: ${summary.error?.code ?? "no error"}`,
      );
    } else if (onClock(summary)) {
      // Left to the clock: its wake-ups are under the kills too.
    } else if (summary.status === "parked" && resumeParked) {
      // As a user who comes back later: the run stays parked longer than its nodes' deadline.
      run.parkedSeenAt ??= Date.now();
      if (Date.now() - run.parkedSeenAt < soak.settings.parkHoldMs) continue;
      if (summary.recoveryReason === null) violations.push(`${run.runId} parked with no reason`);
      else tally.countReason(summary.recoveryReason.code);
      const reply = await host.call("runs.resume", { runId: run.runId });
      if (reply?.kind === "applied") {
        delete run.parkedSeenAt;
        run.resumes += 1;
        figures.resumesDuringStorm += 1;
        figures.parkedDuringStorm += 1;
        if (soak.settings.parkHoldMs > soak.settings.deadlineMs) figures.resumesPastDeadline += 1;
      }
    }
  }
  return list;
}
