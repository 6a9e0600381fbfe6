import {
  clockDueAt,
  isClockReason,
  type NodeVisitResult,
  PAUSED_AT_NODE_BOUNDARY,
  type RunRecord,
  type SafeError,
  safeError,
  type SavedVisit,
  type Transition,
} from "@piw/protocol";
import type { CompiledBranch, CompiledMapNode, CompiledParallelNode } from "../compiler/compiled-workflow.js";
import { branchPort, firstStop, type ParkReason } from "./branch-port.js";
import { expectSaved, FenceLost, RunParked } from "./execution-signals.js";
import { ForkScheduler } from "./fork-scheduler.js";
import { type JoinState, joinState } from "./join-policy.js";
import { type VisitProgress, visitProgress } from "./visit-progress.js";
import { openMapList } from "./map-list.js";
import { laneOf, lastInLane, type NextStep, nextAfter } from "./run-position.js";
import { type Execution, type Lane, runSequence } from "./visit-sequence.js";

/** Why a branch's signal aborted: its join was decided without it (it is saved as cancelled). */
class JoinDecided extends Error {
  override readonly name = "JoinDecided";
}

/** Why a branch's signal aborted: another branch stopped the run (a park, a lost fence): save nothing. */
class ForkStopping extends Error {
  override readonly name = "ForkStopping";
}

/** Where one branch stands; each phase holds what that phase needs. */
type BranchPhase =
  | { kind: "queued"; start: NextStep; reopens: boolean }
  | { kind: "running"; controller: AbortController }
  /**
   * At rest until the run parks: its wait or retry pause asks to park the run on the clock (held until
   * nothing else of the fork can run), or a pause stopped it at a node boundary (`paused`, held until
   * every running branch has finished its visit).
   */
  | {
      kind: "parking";
      controller: AbortController;
      reason: ParkReason;
      settle(t: Transition<RunRecord>): void;
    }
  | { kind: "succeeded"; output: unknown }
  | { kind: "failed"; error: SafeError }
  /** `closesOpenVisit`: its unfinished visit from before a crash stays open until the fork saves it cancelled. */
  | { kind: "cancelled"; closesOpenVisit: boolean }
  /** It threw: the fork stops the others and throws the same once they have all ended. */
  | { kind: "stopped"; error: unknown };

function findSaved(saved: readonly SavedVisit[], path: string, visit: number): number {
  for (let i = saved.length - 1; i >= 0; i -= 1) {
    const v = saved[i] as SavedVisit;
    if (v.path === path && v.visit === visit) return i;
  }
  return -1;
}

/** A branch's phase from the visits saved after its fork's visit opened (none: a fresh start). */
function initialPhase(exec: Execution, branch: CompiledBranch, savedAt: number): BranchPhase {
  const { workflow, position } = exec;
  const last = savedAt < 0 ? undefined : lastInLane(workflow, position.saved, branch.scope, savedAt);
  const fresh = (position.visitCounts.get(branch.startPath) ?? 0) + 1;
  if (last === undefined) {
    return { kind: "queued", start: { kind: "visit", path: branch.startPath, visit: fresh }, reopens: false };
  }
  const next = nextAfter(last, position.visitCounts);
  switch (next.kind) {
    case "complete":
      return { kind: "succeeded", output: next.output };
    case "fail":
      return { kind: "failed", error: next.error };
    case "visit":
      return { kind: "queued", start: next, reopens: last.status === "running" };
    case "wait":
      return {
        kind: "failed",
        error: safeError("internal_error", `Branch ${branch.scope} stopped at a checkpoint.`),
      };
    default:
      return next satisfies never;
  }
}

/** The visits still open in `scope` and the branches nested in it, saved after position `after`. */
function openVisitsUnder(exec: Execution, scope: string, after: number): SavedVisit[] {
  return exec.position.saved.filter((v, i) => {
    if (i <= after || v.status !== "running") return false;
    const lane = laneOf(exec.workflow, v.path);
    return lane === scope || lane.startsWith(`${scope}/`);
  });
}

/** A node that forks: a parallel node's branches are fixed, a map node's come from its saved list. */
type ForkNode = CompiledParallelNode | CompiledMapNode;

/** A fork's visit as the runner sees it: its branches, in order, and how many may run at once. */
interface OpenFork {
  node: ForkNode;
  branches: readonly CompiledBranch[];
  limit: number;
  /** A map's visit reports how many of its items' branches have ended, so views can count them. */
  progress?: VisitProgress;
}

/**
 * Runs one visit of a parallel or map node: its branches, at most `concurrency` at once, each its own
 * sequence of visits, until the join is decided; then the branches still running are cancelled and
 * saved as such. Branches that had finished before a crash are not run again. Never returns or throws
 * before every branch it started has ended.
 */
export async function runFork(
  exec: Execution,
  lane: Lane,
  node: ForkNode,
  visit: number,
  attempt: number,
): Promise<NodeVisitResult> {
  if (node.kind === "parallel") {
    const limit = node.concurrency ?? node.branches.length;
    return runBranches(exec, lane, { node, branches: node.branches, limit }, visit);
  }
  const list = await openMapList(exec, lane, node, visit);
  if (list.kind === "failed") return { status: "failed", error: list.error };
  const where = { path: node.path, visit, attempt };
  const progress = visitProgress(where, lane.port.reportProgress.bind(lane.port));
  try {
    return await runBranches(
      exec,
      lane,
      { node, branches: list.branches, limit: node.concurrency, progress },
      visit,
    );
  } finally {
    progress.flush();
  }
}

async function runBranches(
  exec: Execution,
  lane: Lane,
  fork: OpenFork,
  visit: number,
): Promise<NodeVisitResult> {
  const { node, limit } = fork;
  const total = fork.branches.length;
  const savedAt = findSaved(exec.position.saved, node.path, visit);
  const phases = new Map<string, BranchPhase>(
    fork.branches.map((b) => [b.name, initialPhase(exec, b, savedAt)]),
  );
  const scheduler = new ForkScheduler();

  const count = (kind: BranchPhase["kind"]) => [...phases.values()].filter((p) => p.kind === kind).length;
  const reportEnded = () =>
    fork.progress?.report({ done: count("succeeded") + count("failed") + count("cancelled"), total });
  reportEnded();
  const state = () => joinState(node.join, total, count("succeeded"), count("failed"));
  const cancelError = (branch: string) =>
    safeError(
      "cancelled",
      `Branch ${branch} of ${node.path} was cancelled: its join was decided without it.`,
    );

  const park = async (branch: string, reason: ParkReason) => {
    // Saved now, so this wait keeps its time (and a retry its count) whichever branch parks the run.
    if (isClockReason(reason)) expectSaved(await lane.port.scheduleVisit(reason));
    return new Promise<Transition<RunRecord>>((resolve, reject) => {
      const phase = phases.get(branch);
      if (phase?.kind !== "running") return reject(new ForkStopping());
      const { controller } = phase;
      if (controller.signal.aborted) return reject(controller.signal.reason);
      controller.signal.addEventListener("abort", () => reject(controller.signal.reason), { once: true });
      phases.set(branch, { kind: "parking", controller, reason, settle: resolve });
      scheduler.dispatch({ type: "branch.rested" });
    });
  };

  const start = (branch: CompiledBranch, from: NextStep, reopens: boolean) => {
    const controller = new AbortController();
    // Its unfinished visit from before a crash, held by a pause before it reopened: still open.
    let heldReopen = false;
    const onHeld = (req: { path: string; visit: number }) => {
      if (reopens && from.kind === "visit" && req.path === from.path && req.visit === from.visit)
        heldReopen = true;
    };
    const onOuter = () => controller.abort(lane.signal.reason);
    lane.signal.addEventListener("abort", onOuter, { once: true });
    phases.set(branch.name, { kind: "running", controller });
    const branchLane: Lane = {
      name: branch.scope,
      port: branchPort(lane.port, (reason) => park(branch.name, reason), onHeld),
      signal: controller.signal,
      cancelledByJoin: () =>
        controller.signal.reason instanceof JoinDecided ? cancelError(branch.name) : null,
    };
    const task = runSequence(exec, branchLane, from).then(
      (end): BranchPhase => {
        switch (end.kind) {
          case "complete":
            return { kind: "succeeded", output: end.output };
          case "failed":
            return { kind: "failed", error: end.error };
          case "cancelled":
            return { kind: "cancelled", closesOpenVisit: false };
          case "checkpoint":
            return {
              kind: "failed",
              error: safeError("internal_error", `Branch ${branch.scope} reached a checkpoint.`),
            };
          default:
            return end satisfies never;
        }
      },
      (error: unknown): BranchPhase => {
        if (error instanceof FenceLost) return { kind: "stopped", error };
        if (branchLane.cancelledByJoin() !== null) {
          // Nothing of it ran again: its join closes the open visit as for a loser never started.
          return { kind: "cancelled", closesOpenVisit: heldReopen };
        }
        // A cancel of the run while the branch rested at a boundary: it ends as cancelled, like the rest.
        if (lane.signal.aborted && !(error instanceof RunParked))
          return { kind: "cancelled", closesOpenVisit: false };
        return { kind: "stopped", error };
      },
    );
    void task.then((phase) => {
      lane.signal.removeEventListener("abort", onOuter);
      phases.set(branch.name, phase);
      // The loop must hear of every end, whatever the live count does: a lost wake is a hung fork.
      try {
        reportEnded();
      } finally {
        scheduler.dispatch({ type: "branch.ended" });
      }
    });
  };

  /** Whether a branch rests at a boundary for a pause: then no other branch starts. */
  const pausing = () => [...phases.values()].some((p) => p.kind === "parking" && p.reason.code === "paused");

  /** Stop what still runs or waits: losers of a decided join are cancelled, otherwise only stopped. */
  const stopRest = (reason: Error) => {
    for (const [name, phase] of phases) {
      if (phase.kind === "running" || phase.kind === "parking") phase.controller.abort(reason);
      else if (phase.kind === "queued" && !phase.reopens)
        phases.set(name, { kind: "cancelled", closesOpenVisit: false });
    }
  };

  do {
    const stopped = [...phases.values()].some((p) => p.kind === "stopped");
    const decided = state();
    if (stopped || lane.signal.aborted) {
      stopRest(new ForkStopping());
    } else if (decided !== "pending") {
      stopRest(new JoinDecided());
      for (const [name, phase] of phases) {
        // An unfinished visit of a branch the join no longer needs, from before a crash: saved as cancelled.
        if (phase.kind === "queued") phases.set(name, { kind: "cancelled", closesOpenVisit: true });
      }
    } else {
      // A branch parked on the clock holds no slot: it runs nothing until the run wakes.
      let running = count("running");
      // A pause: the branches that run finish their visits, and no other branch starts.
      if (pausing()) running = limit;
      for (const branch of fork.branches) {
        const phase = phases.get(branch.name);
        if (running >= limit) break;
        if (phase?.kind !== "queued") continue;
        start(branch, phase.start, phase.reopens);
        running += 1;
      }
      await parkWhenIdle();
    }
  } while (await scheduler.next(count("running") + count("parking") > 0));
  for (const loser of fork.branches) {
    const phase = phases.get(loser.name);
    if (phase?.kind !== "cancelled" || !phase.closesOpenVisit) continue;
    // Its open visit, and those of any parallel node nested in it: none of them runs again.
    const result = { status: "failed" as const, error: cancelError(loser.name) };
    for (const open of openVisitsUnder(exec, loser.scope, savedAt)) {
      expectSaved(await lane.port.finishNodeVisit({ path: open.path, visit: open.visit, result }));
    }
  }

  const errors = [...phases.values()].flatMap((p) => (p.kind === "stopped" ? [p.error] : []));
  if (errors.length > 0) throw firstStop(errors, scheduler.parkedFor());
  if (lane.signal.aborted) {
    const what = node.kind === "map" ? "Map" : "Parallel";
    return { status: "failed", error: safeError("cancelled", `${what} node ${node.path} was cancelled.`) };
  }
  return joinResult(exec, fork, phases, state());

  /**
   * Every branch that can still run rests: park the run once. For a pause as soon as no branch runs
   * (the queued ones start after the resume), else on the clock for the earliest due time.
   */
  async function parkWhenIdle(): Promise<void> {
    if (!scheduler.mayPark() || count("running") > 0) return;
    const paused = pausing();
    if (!paused && count("queued") > 0) return;
    const waiting = [...phases.values()].flatMap((p) => (p.kind === "parking" ? [p] : []));
    const earliest = waiting.sort((a, b) => (clockDueAt(a.reason) ?? 0) - (clockDueAt(b.reason) ?? 0))[0];
    if (earliest === undefined) return;
    // A pause parks the run with no wake time: the due times stay saved on the visits.
    const reason = paused ? PAUSED_AT_NODE_BOUNDARY : earliest.reason;
    // A nested fork parks through its own branch. When that branch was stopped meanwhile (its join
    // decided without it, or the run cancelled), its signal stops these branches too: no park to settle.
    const parked = await scheduler.park(
      reason,
      () => lane.port.parkRun(reason),
      () => lane.signal.aborted,
    );
    if (parked === undefined) return;
    for (const phase of waiting) phase.settle(parked);
  }
}

/**
 * The joined output: a parallel node's by branch name (only the branches that succeeded), a map
 * node's in item order (`null` for an item whose branch did not succeed).
 */
function joinedOutput(fork: OpenFork, phases: ReadonlyMap<string, BranchPhase>): unknown {
  const outputOf = (branch: CompiledBranch) => {
    const phase = phases.get(branch.name);
    return phase?.kind === "succeeded" ? { value: phase.output } : undefined;
  };
  if (fork.node.kind === "map") return fork.branches.map((b) => outputOf(b)?.value ?? null);
  const output: Record<string, unknown> = {};
  for (const branch of fork.branches) {
    const got = outputOf(branch);
    if (got !== undefined) output[branch.name] = got.value;
  }
  return output;
}

function joinResult(
  exec: Execution,
  fork: OpenFork,
  phases: ReadonlyMap<string, BranchPhase>,
  state: JoinState,
): NodeVisitResult {
  const { node } = fork;
  if (state === "satisfied") {
    const output = joinedOutput(fork, phases);
    const target = exec.workflow.next(node.path, output);
    return {
      status: "succeeded",
      output: output as never,
      next: target.kind === "node" ? target.path : null,
    };
  }
  // The first branch, in declaration order, that failed on its own (not cancelled by the join).
  const failures = fork.branches.flatMap((b) => {
    const phase = phases.get(b.name);
    return phase?.kind === "failed" ? [{ name: b.name, error: phase.error }] : [];
  });
  const failure = failures.find((f) => f.error.code !== "cancelled") ?? failures[0];
  if (failure === undefined) {
    return {
      status: "failed",
      error: safeError("internal_error", `The join of ${node.path} was not decided.`),
    };
  }
  return {
    status: "failed",
    error: safeError(
      failure.error.code,
      `Branch ${failure.name} of ${node.path} failed: ${failure.error.message}`,
    ),
  };
}
