import { PAUSED_AT_NODE_BOUNDARY } from "@piw/protocol";
import { describe, expect, it } from "vitest";
import type { ParkReason } from "../src/executor/branch-port.js";
import {
  type ForkLoopEvent,
  type ForkLoopPhase,
  ForkScheduler,
  transition,
} from "../src/executor/fork-scheduler.js";

const clock: ParkReason = { code: "waiting", message: "waiting", path: "fan/a/a", visit: 1, until: 5 };
const noWake = () => undefined;
const looking: ForkLoopPhase = { kind: "looking", again: false, parked: undefined };
const waiting: ForkLoopPhase = { kind: "waiting", wake: noWake, parked: undefined };
const lookEnded = (busy: boolean): ForkLoopEvent => ({ type: "look.ended", busy, wake: noWake });

/** `promise`'s value once pending timers' turn has come, else "still waiting" (a hang fails at once). */
function settledSoon<T>(promise: Promise<T>): Promise<T | "still waiting"> {
  return Promise.race([promise, new Promise<"still waiting">((r) => setImmediate(() => r("still waiting")))]);
}

function run(from: ForkLoopPhase, events: ForkLoopEvent[]): ForkLoopPhase {
  return events.reduce(transition, from);
}

/** Where the loop goes once it has looked with branches still in flight: `waiting` only if nothing moved. */
function afterLook(from: ForkLoopPhase, events: ForkLoopEvent[]): ForkLoopPhase["kind"] {
  return run(from, [...events, lookEnded(true)]).kind;
}

describe("fork scheduler: transitions", () => {
  it("waits once it has looked and nothing moved, and ends once no branch is in flight", () => {
    expect(transition(looking, lookEnded(true)).kind).toBe("waiting");
    expect(transition(looking, lookEnded(false))).toEqual({ kind: "ended", parked: undefined });
  });

  it("a waiting loop is woken by a branch that rests or ends", () => {
    for (const type of ["branch.rested", "branch.ended"] as const) {
      expect(transition(waiting, { type })).toEqual({ kind: "looking", again: false, parked: undefined });
    }
  });

  it("a branch that comes to rest while the loop looks makes it look again rather than wait", () => {
    expect(afterLook(looking, [{ type: "branch.rested" }])).toBe("looking");
  });

  it("a branch that ends while the loop looks, or awaits the run's park, makes it look again", () => {
    expect(afterLook(looking, [{ type: "branch.ended" }])).toBe("looking");
    const parked = [
      { type: "park.started", reason: PAUSED_AT_NODE_BOUNDARY },
      { type: "branch.ended" },
      { type: "park.settled" },
    ] satisfies ForkLoopEvent[];
    expect(afterLook(looking, parked)).toBe("looking");
  });

  it("a park refused because the fork was stopped meanwhile goes on until its branches end", () => {
    const refused: ForkLoopEvent[] = [
      { type: "park.started", reason: clock },
      { type: "park.failed", error: new Error("stopped"), stopping: true },
    ];
    const after = run(looking, refused);
    expect(after).toEqual({ kind: "looking", again: false, parked: clock });
    // It waits for the stopped branches, is woken as each ends, and ends with the last.
    expect(transition(after, lookEnded(true)).kind).toBe("waiting");
    expect(run(after, [lookEnded(true), { type: "branch.ended" }, lookEnded(false)])).toEqual({
      kind: "ended",
      parked: clock,
    });
  });

  it("a park refused while the fork still runs fails the loop with the refusal", () => {
    const error = new Error("fence lost");
    const events: ForkLoopEvent[] = [
      { type: "park.started", reason: clock },
      { type: "park.failed", error, stopping: false },
    ];
    expect(run(looking, events)).toEqual({ kind: "failed", error });
  });

  it("moves before a woken loop looks need no second look", () => {
    const woken = run(waiting, [
      { type: "branch.ended" },
      { type: "branch.rested" },
      { type: "look.started" },
    ]);
    expect(woken).toEqual(looking);
    expect(transition(woken, lookEnded(true)).kind).toBe("waiting");
  });

  it("parks the run at most once per visit, and only while it looks", () => {
    const park: ForkLoopEvent = { type: "park.started", reason: clock };
    const parked = run(looking, [park, { type: "park.settled" }]);
    expect(parked).toEqual({ kind: "looking", again: false, parked: clock });
    expect(() => transition(parked, park)).toThrow(/park.started while looking/);
    expect(() => transition(waiting, park)).toThrow(/park.started while waiting/);
  });
});

describe("fork scheduler: the loop's awaits", () => {
  it("next() resolves once a branch moves, and park() keeps the reason it parked with", async () => {
    const scheduler = new ForkScheduler();
    const next = scheduler.next(true);
    scheduler.dispatch({ type: "branch.ended" });
    expect(await settledSoon(next)).toBe(true);
    const parked = await scheduler.park(
      clock,
      async () => "parked",
      () => false,
    );
    expect(parked).toBe("parked");
    expect(scheduler.mayPark()).toBe(false);
    expect(scheduler.parkedFor()).toEqual(clock);
    await expect(scheduler.next(false)).resolves.toBe(false);
  });

  it("a branch that ends during the park is not missed: the loop looks again at once", async () => {
    const scheduler = new ForkScheduler();
    await scheduler.park(
      PAUSED_AT_NODE_BOUNDARY,
      async () => scheduler.dispatch({ type: "branch.ended" }),
      () => false,
    );
    // No further move comes: a loop that waited now would wait for ever.
    expect(await settledSoon(scheduler.next(true))).toBe(true);
  });

  it("park() answers undefined when the fork was stopped, and throws the refusal otherwise", async () => {
    const stopped = new ForkScheduler();
    const failing = async () => Promise.reject(new Error("lost"));
    await expect(stopped.park(clock, failing, () => true)).resolves.toBeUndefined();
    expect(stopped.mayPark()).toBe(false);
    const running = new ForkScheduler();
    await expect(running.park(clock, failing, () => false)).rejects.toThrow("lost");
  });
});
