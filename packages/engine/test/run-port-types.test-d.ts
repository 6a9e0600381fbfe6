import type { RecoveryReason, RunPortWrites, WorkerParams, WorkerResult, WorkerWrite } from "@piw/protocol";
import { describe, expectTypeOf, it } from "vitest";
import type { RunPort } from "../src/executor/run-port.js";

// Compile-time half of the port contract: `pnpm typecheck` (and `vitest --typecheck`) fails when any
// `@ts-expect-error` below stops being an error or an `expectTypeOf` stops holding.

declare const port: RunPort;

/** The keys of `T` that are optional. */
type Optional<T> = { [K in keyof T]-?: undefined extends T[K] ? K : never }[keyof T];

describe("RunPort", () => {
  it("has no optional method: a port or a wrapper that leaves one out does not compile", () => {
    expectTypeOf<Optional<RunPort>>().toEqualTypeOf<never>();
    const { scheduleVisit: _schedule, ...withoutSchedule } = port;
    // @ts-expect-error `scheduleVisit` is missing
    const noSchedule: RunPort = withoutSchedule;
    const { advanceNodeVisit: _advance, ...withoutAdvance } = port;
    // @ts-expect-error `advanceNodeVisit` is missing
    const noAdvance: RunPort = withoutAdvance;
    const { reportProgress: _progress, ...withoutProgress } = port;
    // @ts-expect-error `reportProgress` is missing
    const noProgress: RunPort = withoutProgress;
    void [noSchedule, noAdvance, noProgress];
  });

  it("has one durable write per write of the worker method table, with its params and result", () => {
    expectTypeOf<keyof RunPortWrites>().toEqualTypeOf<
      | "markRunning"
      | "startNodeVisit"
      | "finishNodeVisit"
      | "advanceNodeVisit"
      | "reserveEffect"
      | "settleEffect"
      | "enqueueMessage"
      | "finishRun"
      | "parkRun"
      | "scheduleVisit"
      | "redefineRun"
      | "checkBudget"
    >();
    expectTypeOf<WorkerWrite>().toEqualTypeOf<
      | "run.markRunning"
      | "visit.start"
      | "visit.finish"
      | "visit.advance"
      | "effect.reserve"
      | "effect.settle"
      | "message.enqueue"
      | "run.finish"
      | "budget.check"
      | "run.park"
      | "visit.schedule"
      | "run.redefine"
    >();
    expectTypeOf<Pick<RunPort, keyof RunPortWrites>>().toEqualTypeOf<RunPortWrites>();
    expectTypeOf(port.scheduleVisit).parameters.toEqualTypeOf<[WorkerParams<"visit.schedule">]>();
    expectTypeOf(port.scheduleVisit).returns.resolves.toEqualTypeOf<WorkerResult<"visit.schedule">>();
    expectTypeOf(port.startNodeVisit).parameters.toEqualTypeOf<[WorkerParams<"visit.start">]>();
    expectTypeOf(port.advanceNodeVisit).returns.resolves.toEqualTypeOf<WorkerResult<"visit.advance">>();
    expectTypeOf(port.parkRun).parameters.toEqualTypeOf<[RecoveryReason]>();
    // Params a worker may leave out are no params at all.
    expectTypeOf(port.markRunning).parameters.toEqualTypeOf<[]>();
  });

  it("sends its live progress and agent polls with the worker methods' params", () => {
    expectTypeOf(port.reportProgress).parameters.toEqualTypeOf<[WorkerParams<"node.progress">]>();
    expectTypeOf(port.nextAgentEvent).parameters.toEqualTypeOf<[WorkerParams<"agent.next">, AbortSignal]>();
  });

  it("has exactly the durable writes and the methods the executor needs besides", () => {
    expectTypeOf<Exclude<keyof RunPort, keyof RunPortWrites>>().toEqualTypeOf<
      "readRun" | "loadSnapshot" | "reportProgress" | "nextAgentEvent"
    >();
  });
});
