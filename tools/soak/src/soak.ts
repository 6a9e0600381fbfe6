/**
 * The random-kill soak (`pnpm soak`): a real host process and its real workers run many workflows
 * (actions, shell commands that fail their first attempt and are retried after a durable pause,
 * compute nodes and waits on the host's clock) at once while a seeded schedule kills them with SIGKILL — the host (then started again), run
 * workers and the idle warm worker. After the storm the kills stop and every run is settled: a run
 * must be `done/completed`, or `parked` with a recovery reason and then finish after exactly one
 * `runs.resume`. Every managed effect appends a line to a ledger before it does its work, so the
 * soak can tell whether an effect the store had already settled was ever executed again.
 *
 * Beside that chain run a parallel workflow (joins "all" and "any" of branches of those kinds) and a
 * map workflow (the same joins over items' branches), and a share of the schedule's events cancels
 * one of their runs mid-flight (`workflows.ts`).
 *
 * Invariants (`invariants.ts`), checked for each run as soon as it ends, and for all of them at the end:
 * - no run ends `failed`, nor `cancelled` unless the soak cancelled it (the workflows never fail);
 * - each run ends once: one end event in its trace, and an ended run never changes state again;
 * - a completed run has every node succeeded (a join's loser aside), each visited once;
 * - cancel wins: a cancelled run ends cancelled, and no effect of it is reserved after the cancel;
 * - every effect of a completed run is settled; no execution of any effect started after it settled;
 * - after the storm, every run is done, or parked with a reason and completes after one resume;
 * - every parked run finishes after one explicit resume, however long it was parked: every shell and
 *   action node has a deadline (SOAK_DEADLINE_MS), and the soak leaves each run parked for a person
 *   longer than that (SOAK_PARK_HOLD_MS) before it resumes it, in the storm and after it.
 *
 * Settings (env): SOAK_SEED (1), SOAK_SECONDS (180), SOAK_CONCURRENCY (4), SOAK_NODES (12), SOAK_PURE (40: each compute slot of
 * the chain is a run of that many pure steps, which the worker pipelines),
 * SOAK_WORKFLOWS (chain,parallel,map), SOAK_CANCEL_PERCENT (5),
 * SOAK_KILL_MIN_MS (250), SOAK_KILL_MAX_MS (1500), SOAK_DEADLINE_MS (4000), SOAK_PARK_HOLD_MS (the
 * deadline + 1000), SOAK_SKIP_BUILD=1 to use the apps already built,
 * SOAK_DIR for the scratch folder (a temp dir by default, removed unless SOAK_KEEP=1).
 * It is a script, not a test: it prints its figures and exits 1 if any invariant failed.
 *
 * The parts: `settings.ts` (the env above), `start-runs.ts` (the workflows and their runs), `kills.ts`
 * (the kill schedule's events), `sweep.ts` (each run's end, checked), `drive.ts` (the storm and the
 * quiet phase), `report.ts` (the figures printed).
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { log, type Scratch, type SoakContext } from "./context.js";
import { driveStorm, settleAfterStorm } from "./drive.js";
import { SoakHost } from "./host.js";
import { report } from "./report.js";
import { seededRandom } from "./seeded-random.js";
import { readSettings } from "./settings.js";
import { loadSoakWorkflows } from "./start-runs.js";
import { SoakTally } from "./tally.js";

const settings = readSettings();
const REPO = process.cwd();
const HOST_MAIN = join(REPO, "apps/host/dist/main.js");

const root = mkdtempSync(join(process.env.SOAK_DIR ?? tmpdir(), "piw-soak-"));
const scratch: Scratch = {
  root,
  stateDir: join(root, "state"),
  ledger: join(root, "effects.ledger"),
  hostLog: join(root, "host.log"),
};
const soak: SoakContext = {
  settings,
  scratch,
  host: new SoakHost(HOST_MAIN, scratch.stateDir, scratch.hostLog),
  random: seededRandom(settings.seed),
  tally: new SoakTally(),
};

function build(): void {
  if (process.env.SOAK_SKIP_BUILD === "1") return;
  log("soak: building the apps");
  const result = spawnSync("pnpm", ["build"], { cwd: REPO, stdio: ["ignore", "ignore", "inherit"] });
  if (result.error !== undefined || result.status !== 0) throw new Error("pnpm build failed");
}

async function main(): Promise<void> {
  build();
  const workflows = await loadSoakWorkflows(soak);
  await soak.host.start();
  log(
    `soak: seed ${settings.seed}, ${settings.seconds} s, ${settings.concurrency} runs at a time of ${settings.workflows.join(" and ")}, in ${root}`,
  );
  await driveStorm(soak, workflows);
  log("soak: the storm is over; settling every run");
  const completed = await settleAfterStorm(soak);
  await soak.host.kill();
  report(soak, completed);
  const violations = soak.tally.violations;
  if (process.env.SOAK_KEEP !== "1" && violations.length === 0)
    rmSync(root, { recursive: true, force: true });
  process.exitCode = violations.length === 0 ? 0 : 1;
}

main().catch(async (error) => {
  log(`soak: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
  await soak.host.kill().catch(() => {});
  process.exitCode = 2;
});
