import type { ErrorCode } from "@piw/protocol";
import type { NodeContext } from "../compiler/compiled-workflow.js";

/**
 * How long to wait before each retry: `initialMs` before the second attempt, multiplied by `factor`
 * for each one after, at most `maxMs`. `jitter` (0 to 1) takes up to that share off each wait at
 * random, so that many runs failing together do not all retry at the same moment.
 */
export interface RetryBackoff {
  readonly initialMs: number;
  readonly factor?: number;
  readonly maxMs?: number;
  readonly jitter?: number;
}

/**
 * Which failures are retried. Without `retryOn`, every failure of the node itself is (not a cancel,
 * nor one that cannot go differently next time: `max_steps_exceeded`, `effect_conflict`,
 * `output_too_large`, `source_changed`). With it, only the failures it names: `timedOut` for a
 * deadline that passed, `codes` for failures with those error codes.
 */
export interface RetryOn {
  readonly timedOut?: boolean;
  readonly codes?: readonly ErrorCode[];
}

/**
 * A node's retry policy: at most `attempts` attempts in all (2 or more), with a durable pause between
 * them; the run parks with no process while it waits and the host wakes it at the saved time.
 */
export interface RetryPolicy {
  readonly attempts: number;
  readonly backoff: RetryBackoff;
  readonly retryOn?: RetryOn;
}

/** What a wait node's output says: the time it waited until, as an ISO string. */
export interface WaitOutput {
  until: string;
}

/**
 * How long a wait node waits: `ms` from when it is first reached, or `until` a time computed from the
 * node's context once, when it is first reached (the time is saved, so a resumed run keeps it).
 */
export type WaitOptions<I = unknown> =
  | { readonly title?: string; readonly ms: number }
  | { readonly title?: string; readonly until: { bivariant(ctx: NodeContext<I>): Date }["bivariant"] };
