import type { ParkReason } from "./branch-port.js";

// The fork's loop (fork-runner.ts) looks at its branches, starts what may start, parks the run once
// when every branch that can still run rests, and waits for a branch to move. Each of its hangs came
// from a move it missed: a branch coming to rest, or ending, while the loop was not waiting (looking,
// or awaiting the park), or a park refused because the fork was stopped meanwhile. So where the loop
// stands is one union, and every move goes through `transition`.

/** Where the fork's loop stands; each phase holds what that phase needs. */
export type ForkLoopPhase =
  /** It reads its branches; `again`: one moved meanwhile, so it reads them again before it waits. */
  | { kind: "looking"; again: boolean; parked: ParkReason | undefined }
  /** It awaits the run's park (once per visit of the fork); `again` as for looking. */
  | { kind: "parking"; reason: ParkReason; again: boolean }
  /** It awaits a branch's move; `wake` resumes it. */
  | { kind: "waiting"; wake: () => void; parked: ParkReason | undefined }
  /** No branch is in flight: the loop is over. */
  | { kind: "ended"; parked: ParkReason | undefined }
  /** The run's park failed while the fork still ran: the loop throws `error`. */
  | { kind: "failed"; error: unknown };

/** What moves the loop: its own steps, and its branches' moves (which may come at any await). */
export type ForkLoopEvent =
  | { type: "look.started" }
  /** `busy`: a branch is still in flight; `wake` resumes the loop if it must wait. */
  | { type: "look.ended"; busy: boolean; wake: () => void }
  /** A branch asks the fork to park the run (its wait, its retry, a pause): it rests until then. */
  | { type: "branch.rested" }
  | { type: "branch.ended" }
  | { type: "park.started"; reason: ParkReason }
  | { type: "park.settled" }
  /** `stopping`: the fork's own lane was stopped meanwhile (a nested fork's branch lost its join, a cancel). */
  | { type: "park.failed"; error: unknown; stopping: boolean };

/** An event the loop cannot meet in this phase: a bug in the loop, never a run's state. */
class ForkLoopBroken extends Error {
  override readonly name = "ForkLoopBroken";
  constructor(phase: ForkLoopPhase, event: ForkLoopEvent) {
    super(`The fork's loop met ${event.type} while ${phase.kind}.`);
  }
}

/** A branch moved: a loop that waits is woken, one that looks or parks looks again before it waits. */
function branchMoved(phase: ForkLoopPhase): ForkLoopPhase {
  switch (phase.kind) {
    case "looking":
    case "parking":
      return { ...phase, again: true };
    case "waiting":
      return { kind: "looking", again: false, parked: phase.parked };
    case "ended":
    case "failed":
      return phase;
    default:
      return phase satisfies never;
  }
}

/** The loop's next phase; pure, so the fork's waking rules can be checked move by move. */
export function transition(phase: ForkLoopPhase, event: ForkLoopEvent): ForkLoopPhase {
  switch (event.type) {
    case "look.started":
      if (phase.kind !== "looking") throw new ForkLoopBroken(phase, event);
      return { ...phase, again: false };
    case "look.ended":
      if (phase.kind !== "looking") throw new ForkLoopBroken(phase, event);
      if (!event.busy) return { kind: "ended", parked: phase.parked };
      // A move it could not see while looking: it looks again rather than wait for a move that may not come.
      if (phase.again) return phase;
      return { kind: "waiting", wake: event.wake, parked: phase.parked };
    case "branch.rested":
    case "branch.ended":
      return branchMoved(phase);
    case "park.started":
      if (phase.kind !== "looking" || phase.parked !== undefined) throw new ForkLoopBroken(phase, event);
      return { kind: "parking", reason: event.reason, again: phase.again };
    case "park.settled":
      if (phase.kind !== "parking") throw new ForkLoopBroken(phase, event);
      return { kind: "looking", again: phase.again, parked: phase.reason };
    case "park.failed":
      if (phase.kind !== "parking") throw new ForkLoopBroken(phase, event);
      // Its branches are being stopped too: the loop goes on until they have ended, so the fork's
      // visit is saved rather than left open.
      if (event.stopping) return { kind: "looking", again: phase.again, parked: phase.reason };
      return { kind: "failed", error: event.error };
    default:
      return event satisfies never;
  }
}

/** Runs `transition` for one fork's loop, and the only awaits the loop makes. */
export class ForkScheduler {
  private phase: ForkLoopPhase = { kind: "looking", again: false, parked: undefined };

  dispatch(event: ForkLoopEvent): void {
    const from = this.phase;
    this.phase = transition(from, event);
    // The one place the loop is woken: whatever move took it out of waiting.
    if (from.kind === "waiting" && this.phase.kind !== "waiting") from.wake();
  }

  /** Whether the loop may park the run: it looks, and has not parked it yet. */
  mayPark(): boolean {
    return this.phase.kind === "looking" && this.phase.parked === undefined;
  }

  /** The reason the fork parked the run with, once it has (its park may have been refused since). */
  parkedFor(): ParkReason | undefined {
    switch (this.phase.kind) {
      case "parking":
        return this.phase.reason;
      case "failed":
        return undefined;
      case "looking":
      case "waiting":
      case "ended":
        return this.phase.parked;
      default:
        return this.phase satisfies never;
    }
  }

  /** Parks the run through `parkRun`; undefined when it failed because the fork was stopped meanwhile. */
  async park<T>(
    reason: ParkReason,
    parkRun: () => Promise<T>,
    stopping: () => boolean,
  ): Promise<T | undefined> {
    this.dispatch({ type: "park.started", reason });
    let parked: T;
    try {
      parked = await parkRun();
    } catch (error) {
      this.dispatch({ type: "park.failed", error, stopping: stopping() });
      if (this.phase.kind === "failed") throw this.phase.error;
      return undefined;
    }
    this.dispatch({ type: "park.settled" });
    return parked;
  }

  /** The loop has looked: resolves true when it must look again, false once no branch is in flight. */
  async next(busy: boolean): Promise<boolean> {
    const woken = new Promise<void>((wake) => this.dispatch({ type: "look.ended", busy, wake }));
    const phase = this.phase;
    if (phase.kind === "ended") return false;
    if (phase.kind === "waiting") await woken;
    this.dispatch({ type: "look.started" });
    return true;
  }
}
