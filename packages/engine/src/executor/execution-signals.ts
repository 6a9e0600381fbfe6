import type { Conflict, ErrorCode, RecoveryReason, Transition } from "@piw/protocol";
import type { ShellReport } from "../compiler/compiled-workflow.js";

/** The run's claim moved on (cancelled, taken over): stop at once, write nothing more. */
export class FenceLost extends Error {
  override readonly name = "FenceLost";
  constructor(readonly evidence: Conflict) {
    super(`The run's claim is no longer held (${evidence.kind}).`);
  }
}

/** The store parked the run (a pause, an unsettled manual effect): stop, the run waits for a person. */
export class RunParked extends Error {
  override readonly name = "RunParked";
  constructor(readonly reason: RecoveryReason) {
    super(reason.message);
  }
}

/** A node ended badly; the executor saves it on the visit and fails the run. */
export class NodeFailure extends Error {
  override readonly name = "NodeFailure";
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly timedOut = false,
  ) {
    super(message);
  }
}

/** The reason a node's signal aborts when its visit's deadline passes (a cancel carries another). */
export class DeadlinePassed extends Error {
  override readonly name = "DeadlinePassed";
  constructor() {
    super("The step's deadline passed.");
  }
}

/** A shell command exited with a code its node does not count as ok; `report` is what it said. */
export class ShellExitFailure extends NodeFailure {
  constructor(
    message: string,
    readonly report: ShellReport,
  ) {
    super("node_failed", message);
  }
}

/**
 * A port could not take a value: the request carrying it breaks a limit of the channel or the store
 * (too many bytes, nested too deeply) and nothing was saved. The node that produced it fails with
 * `output_too_large`; ports throw it, the executor decides what it fails.
 */
export class ValueTooLarge extends Error {
  override readonly name = "ValueTooLarge";
}

/** Unwrap a saved transition; a lost fence or a park stops the run, anything else is a bug. */
export function expectSaved<T>(t: Transition<T>): T {
  switch (t.kind) {
    case "applied":
    case "adopted":
      return t.value;
    case "recoveryRequired":
      throw new RunParked(t.reason);
    case "conflict":
      throw new FenceLost(t.evidence);
    default:
      return t satisfies never;
  }
}
