import type { ClockReason } from "@piw/protocol";
import type { CompiledWaitNode, NodeContext } from "../compiler/compiled-workflow.js";
import type { WaitOutput } from "../authoring/clock-specs.js";
import { expectSaved, NodeFailure, RunParked } from "./execution-signals.js";
import type { RunPort } from "./run-port.js";

export interface WaitRun {
  node: CompiledWaitNode;
  port: RunPort;
  visit: number;
  /** The due time saved when the visit first parked; null on the visit's first attempt. */
  dueAt: number | null;
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
 * time saved (the host's clock wakes it) and stops the worker. A run resumed early parks again for
 * what is left; one resumed late goes straight on.
 */
export async function runWait(run: WaitRun, ctx: NodeContext): Promise<WaitOutput> {
  const until = dueTimeOf(run, ctx);
  if (until <= run.now()) return { until: new Date(until).toISOString() };
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
