import { setTimeout as sleep } from "node:timers/promises";
import type { SoakContext } from "./context.js";
import { forks, TERMINAL } from "./tally.js";

// The kill schedule's events: each kills the host (then starts it again), a run's worker or the idle
// warm worker with SIGKILL, or cancels a run mid-flight, as the seeded generator picks.

export async function killSomething(soak: SoakContext): Promise<void> {
  const { host, random, settings } = soak;
  const figures = soak.tally.figures;
  const choice = random.next();
  if (choice < 0.2 || !host.up) {
    await host.kill();
    figures.hostKills += 1;
    await sleep(random.between(0, 400));
    await host.start();
    return;
  }
  const status = await host.call("host.status");
  if (status === undefined) return;
  const busy = status.workers.filter((w) => w.pid !== null);
  const idle = status.idleWorkerPid ?? null;
  if (choice < 0.35 && idle !== null) {
    if (signal(idle)) figures.idleWorkerKills += 1;
    return;
  }
  if (choice < 0.35 + settings.cancelShare) {
    await cancelOne(soak);
    return;
  }
  // Half the time, the victim is the worker of a parallel or map run with a branch's visit open, if any:
  // the kill lands mid-flight.
  const flying: typeof busy = [];
  for (const worker of busy) if (await branchesInFlight(soak, worker.runId)) flying.push(worker);
  const pool = flying.length > 0 && random.next() < 0.5 ? flying : busy;
  const victim = pool[Math.floor(random.next() * pool.length)];
  if (victim === undefined || !signal(victim.pid as number)) return;
  figures.workerKills += 1;
  if (flying.includes(victim)) figures.branchKills += 1;
}

/** A run of the parallel or map workflow with a branch's visit open right now. */
async function branchesInFlight(soak: SoakContext, runId: string): Promise<boolean> {
  if (!forks(soak.tally.runs.get(runId)?.workflow)) return false;
  const view = await soak.host.call("runs.get", { runId });
  return (view?.nodes ?? []).some((n) => n.path.includes("/") && n.state === "running");
}

/** Cancels a random unfinished run of the parallel or map workflow, mid-flight, as a user would. */
async function cancelOne(soak: SoakContext): Promise<void> {
  const { host, random, tally } = soak;
  const list = (await host.call("runs.list", { limit: 1000 })) ?? [];
  const candidates = list.filter((s) => {
    const run = tally.runs.get(s.runId);
    return run !== undefined && run.cancel === undefined && forks(run.workflow) && !TERMINAL.has(s.status);
  });
  const target = candidates[Math.floor(random.next() * candidates.length)];
  const run = target && tally.runs.get(target.runId);
  if (run === undefined) return;
  const flying = await branchesInFlight(soak, run.runId);
  const reply = await host.call("runs.cancel", { runId: run.runId });
  // A reply lost with a killed host leaves the cancel unknown: the run may end either way.
  run.cancel = { repliedAt: reply === undefined ? null : Date.now() };
  if (reply === undefined) tally.figures.cancelsLost += 1;
  else if (reply.kind === "applied") {
    tally.figures.cancelsApplied += 1;
    if (flying) tally.figures.cancelsInFlight += 1;
  } else run.cancel = undefined;
}

function signal(pid: number): boolean {
  try {
    process.kill(pid, "SIGKILL");
    return true;
  } catch {
    return false;
  }
}
