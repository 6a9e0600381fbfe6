import { setTimeout as sleep } from "node:timers/promises";
import type { RunSummary } from "@piw/protocol";
import { log, type SoakContext } from "./context.js";
import { readLedger } from "./invariants.js";
import { killSomething } from "./kills.js";
import { startRun } from "./start-runs.js";
import { sweep } from "./sweep.js";
import { onClock, type SoakWorkflow, TERMINAL } from "./tally.js";

// The run driver: the storm keeps the settings' number of runs going, the workflows in turn, while
// the kill schedule fires; the quiet phase then settles every run and resumes each parked one once.
// A run parked for a person is resumed only after it stood parked longer than its nodes' deadline.

/** Runs the storm for the settings' seconds: the host is up when it starts, maybe not when it ends. */
export async function driveStorm(soak: SoakContext, workflows: SoakWorkflow[]): Promise<void> {
  const { settings, random, tally } = soak;
  const stormEnds = Date.now() + settings.seconds * 1000;
  let index = 0;
  let nextKill = Date.now() + random.between(settings.killMinMs, settings.killMaxMs);
  let nextReport = Date.now() + 15_000;
  while (Date.now() < stormEnds) {
    const list = await sweep(soak, true);
    const active = list.filter((s) => tally.runs.has(s.runId) && !TERMINAL.has(s.status)).length;
    for (let i = active; i < settings.concurrency && soak.host.up; i++) {
      const workflow = workflows[index % workflows.length] as SoakWorkflow;
      await startRun(soak, workflow, index++);
    }
    if (Date.now() >= nextKill) {
      await killSomething(soak);
      nextKill = Date.now() + random.between(settings.killMinMs, settings.killMaxMs);
    }
    if (Date.now() >= nextReport) {
      log(`soak: ${Math.round((stormEnds - Date.now()) / 1000)} s left, ${JSON.stringify(tally.figures)}`);
      nextReport = Date.now() + 15_000;
    }
    await sleep(50);
  }
}

/** Sweeps until no run of the soak is moving (or 120 s pass, a violation); returns the last list. */
async function settled(soak: SoakContext, what: string): Promise<RunSummary[]> {
  const { runs, violations } = soak.tally;
  const deadline = Date.now() + 120_000;
  for (;;) {
    const list = await sweep(soak, false);
    const moving = list.filter(
      (s) => runs.has(s.runId) && (["queued", "starting", "running"].includes(s.status) || onClock(s)),
    );
    if (moving.length === 0) return list;
    if (Date.now() > deadline) {
      violations.push(
        `${moving.length} runs still ${what} after 120 s: ${moving.map((s) => s.runId).join(", ")}`,
      );
      return list;
    }
    await sleep(200);
  }
}

/**
 * The quiet phase: no more kills. Waits for every run to settle, then resumes each parked run once;
 * a run not done after that is a violation. Returns how many runs completed.
 */
export async function settleAfterStorm(soak: SoakContext): Promise<number> {
  const { host, tally } = soak;
  const { runs, violations, figures } = tally;
  if (!host.up) await host.start();
  const afterStorm = await settled(soak, "moving after the storm");
  const parked = afterStorm.filter((s) => runs.has(s.runId) && s.status === "parked");
  figures.parkedAfterStorm = parked.length;
  // However long a run was parked, one resume finishes it: each stays parked past its nodes' deadline.
  if (parked.length > 0) await sleep(soak.settings.parkHoldMs);
  for (const summary of parked) {
    if (summary.recoveryReason === null) violations.push(`${summary.runId} parked with no reason`);
    else tally.countReason(summary.recoveryReason.code);
    const reply = await host.call("runs.resume", { runId: summary.runId });
    if (reply?.kind !== "applied") violations.push(`${summary.runId}: resume was ${JSON.stringify(reply)}`);
    else if (soak.settings.parkHoldMs > soak.settings.deadlineMs) figures.resumesPastDeadline += 1;
  }
  const final = await settled(soak, "moving after one resume");
  for (const run of runs.values()) {
    const summary = final.find((s) => s.runId === run.runId);
    if (!run.checked) {
      figures.notDoneOrResumable += 1;
      violations.push(
        `${run.runId} is ${summary?.status ?? "missing"}${summary?.recoveryReason ? ` (${summary.recoveryReason.code})` : ""} after one resume`,
      );
    }
  }
  const completed = [...runs.values()].filter((r) => r.completed).length;
  figures.effectExecutions += readLedger(soak.scratch.ledger).torn;
  return completed;
}
