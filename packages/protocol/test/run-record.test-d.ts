import { describe, expectTypeOf, it } from "vitest";
import {
  type EndedRunRecord,
  hasRunStatus,
  isEndedRun,
  type RecoveryReason,
  type RunRecord,
  type RunRecordOf,
  runOutcome,
  type TerminalOutcome,
} from "../src/index.js";

declare const run: RunRecord;

describe("a run record holds only what its status allows (the status-table rule)", () => {
  it("gives a lease to a starting run only", () => {
    if (run.status === "starting") expectTypeOf(run.leaseExpiresAt).toEqualTypeOf<number>();
    if (run.status === "done") {
      // @ts-expect-error a finished run holds no lease
      void run.leaseExpiresAt;
    }
    if (run.status === "running") {
      // @ts-expect-error a running run is kept by its worker, not a lease
      void run.leaseExpiresAt;
    }
    // @ts-expect-error a run of unknown status may hold no lease
    void run.leaseExpiresAt;
  });

  it("gives an outcome and terminal facts to an ended run only", () => {
    if (run.status === "done") expectTypeOf(run.outcome).toEqualTypeOf<"completed" | "waiting">();
    if (run.status === "failed") expectTypeOf(run.outcome).toEqualTypeOf<"failed" | "timed_out">();
    if (isEndedRun(run)) {
      expectTypeOf(run.finishedAt).toEqualTypeOf<number>();
      expectTypeOf(run.terminalFingerprint).toEqualTypeOf<string>();
      // @ts-expect-error an ended run holds no lease
      void run.leaseExpiresAt;
    }
    if (run.status === "running") {
      // @ts-expect-error a running run has no outcome yet
      void run.outcome;
    }
    expectTypeOf(runOutcome(run)).toEqualTypeOf<TerminalOutcome | null>();
  });

  it("gives a recovery reason to a parked run only, and an error code to a failed one", () => {
    if (run.status === "parked") expectTypeOf(run.recoveryReason).toEqualTypeOf<RecoveryReason>();
    if (run.status === "queued") {
      // @ts-expect-error a queued run has no recovery reason
      void run.recoveryReason;
    }
    if (run.status === "cancelled") {
      // @ts-expect-error only a failed run carries its error code
      void run.errorCode;
    }
  });

  it("narrows by a list of statuses", () => {
    if (hasRunStatus(run, ["starting", "parked"] as const)) {
      expectTypeOf(run).toEqualTypeOf<RunRecordOf<"starting" | "parked">>();
    }
    expectTypeOf<RunRecordOf<"done" | "failed" | "cancelled">>().toEqualTypeOf<EndedRunRecord>();
  });
});
