import type { SoakContext } from "./context.js";

/** Prints the soak's figures and its violations (at most 50) to stdout. */
export function report(soak: SoakContext, completed: number): void {
  const { settings, scratch } = soak;
  const { figures, parkReasons, violations } = soak.tally;
  const lines = [
    `soak: seed ${settings.seed}, ${settings.seconds} s storm, ${settings.concurrency} concurrent runs of ${settings.workflows.join(" and ")} (chain: ${settings.nodes} nodes, pure runs of ${settings.pure}), kills every ${settings.killMinMs}-${settings.killMaxMs} ms`,
    `kills: ${figures.hostKills} host, ${figures.workerKills} run workers (${figures.branchKills} with parallel or map branches in flight), ${figures.idleWorkerKills} idle workers`,
    `cancels: ${figures.cancelsApplied} applied (${figures.cancelsInFlight} with branches in flight), ${figures.cancelsLost} replies lost with the host; ${figures.runsCancelled} runs ended cancelled`,
    `runs: ${figures.runsStarted} started, ${completed} completed (${figures.parallelCompleted} parallel, ${figures.mapCompleted} map), ${figures.parkedDuringStorm} resumes during the storm, ${figures.parkedAfterStorm} parked after it (each resumed once)`,
    `resumes after a park longer than the nodes' ${settings.deadlineMs} ms deadline: ${figures.resumesPastDeadline} (each park held ${settings.parkHoldMs} ms)`,
    `park reasons: ${[...parkReasons].map(([reason, n]) => `${reason} ${n}`).join(", ") || "none"}`,
    `effects: ${figures.effectExecutions} executions, ${figures.settledEffectsReExecuted} settled effects executed again`,
    `reserves sent again after a lost reply: ${figures.reserveResends} (${figures.reservesAdopted} found the run already saved)`,
    `runs not done or resumable: ${figures.notDoneOrResumable}`,
    `invariant violations: ${violations.length}`,
  ];
  process.stdout.write(`${lines.join("\n")}\n`);
  // The runs left behind first: they say more than a repeated per-run problem.
  const ordered = [...violations.filter((v) => v.endsWith("after one resume")), ...violations];
  for (const violation of [...new Set(ordered)].slice(0, 50))
    process.stdout.write(`VIOLATION ${violation}\n`);
  if (violations.length > 0)
    process.stdout.write(`scratch kept in ${scratch.root} (host log: ${scratch.hostLog})\n`);
}
