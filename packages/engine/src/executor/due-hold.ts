import { setTimeout as sleep } from "node:timers/promises";
import { WAKE_LEAD_MS } from "@piw/protocol";
import type { RunPort } from "./run-port.js";

/**
 * Where a woken wait or retry stands against its saved due time: `due` (go on now), `ahead` (more
 * than the wake lead away: only an explicit resume wakes a run that early), `paused` (a pause was
 * asked for while it slept: park again, the due time unchanged) or `cancelled` (the run's signal
 * aborted while it slept).
 */
export type DueHold = "due" | "ahead" | "paused" | "cancelled";

export interface DueWait {
  dueAt: number;
  port: Pick<RunPort, "readRun">;
  signal: AbortSignal;
  now(): number;
}

/**
 * The host's clock wakes a run up to WAKE_LEAD_MS before its due time, so that its worker is ready
 * when the time comes. This sleeps out the rest of the lead in the worker, then reads the run once:
 * a cancel ends the sleep at once and always wins, a pause asked for meanwhile is honoured at the
 * due time. Nothing is saved here; a worker that dies while it sleeps leaves the run to the host's
 * usual recovery, which wakes it again.
 */
export async function holdUntilDue(wait: DueWait): Promise<DueHold> {
  const left = wait.dueAt - wait.now();
  if (left <= 0) return "due";
  if (left > WAKE_LEAD_MS) return "ahead";
  if (wait.signal.aborted) return "cancelled";
  try {
    await sleep(left, undefined, { signal: wait.signal });
  } catch {
    return "cancelled";
  }
  const run = await wait.port.readRun();
  return run?.paused === true ? "paused" : "due";
}
