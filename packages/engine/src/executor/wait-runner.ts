import type { ClockReason } from "@piw/protocol";
import type { CompiledWaitNode, NodeContext } from "../compiler/compiled-workflow.js";
import type { WaitOutput } from "../authoring/clock-specs.js";
import { holdUntilDue } from "./due-hold.js";
import { expectSaved, NodeFailure, RunParked } from "./execution-signals.js";
import type { RunPort } from "./run-port.js";

export interface WaitRun {
  node: CompiledWaitNode;
  port: RunPort;
  visit: number;
  /** The due time saved when the visit first parked; null on the visit's first attempt. */
  dueAt: number | null;
  /** The node's signal: aborts when the run is cancelled. */
  signal: AbortSignal;
  now(): number;
}

/** When the wait ends: its saved time, else `ms` from now or what `until` returns, computed once. */
function dueTimeOf(run: WaitRun, ctx: NodeContext): number {
  if (run.dueAt !== null) return run.dueAt;
  const { due } = run.node;
  if (due.kind === "ms") return run.now() + due.ms;
  let value: unknown;
  try {
    value = due.until(ctx);
  } catch {
    throw new NodeFailure("node_failed", `The until function of wait ${run.node.path} threw.`);
  }
  const time = value instanceof Date ? value.getTime() : Number.NaN;
  if (!Number.isFinite(time) || time < 0) {
    throw new NodeFailure(
      "node_failed",
      `The until function of wait ${run.node.path} returned no valid Date.`,
    );
  }
  return Math.floor(time);
}

/**
 * A wait node: once its time has come, it succeeds with that time; before, it parks the run with the
 * time saved (the host's clock wakes it) and stops the worker. A run the clock woke within the wake
 * lead sleeps here until the time; one resumed earlier, or paused during that sleep, parks again for
 * the same time; one resumed late goes straight on.
 */
export async function runWait(run: WaitRun, ctx: NodeContext): Promise<WaitOutput> {
  const until = dueTimeOf(run, ctx);
  const output = { until: new Date(until).toISOString() };
  if (run.dueAt !== null) {
    const held = await holdUntilDue({ dueAt: until, port: run.port, signal: run.signal, now: run.now });
    if (held === "due") return output;
    if (held === "cancelled") throw new NodeFailure("cancelled", `Wait ${run.node.path} was cancelled.`);
  } else if (until <= run.now()) return output;
  const reason: ClockReason = {
    code: "waiting",
    message: `waiting until ${new Date(until).toISOString()}`,
    path: run.node.path,
    visit: run.visit,
    until,
  };
  expectSaved(await run.port.parkRun(reason));
  throw new RunParked(reason);
}
