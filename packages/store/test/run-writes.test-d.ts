import { expectTypeOf, test } from "vitest";
import type { StoreContext } from "../src/context.js";
import type { RunRow } from "../src/rows.js";
import { transitionRun, updateRun } from "../src/run-writes.js";
import { terminalize } from "../src/terminalize.js";

// Compile-time half of the one-writer rule: `pnpm typecheck` (and `vitest --typecheck`) fails when
// any `@ts-expect-error` below stops being an error.

declare const ctx: StoreContext;
declare const row: RunRow;

test("a run's status moves only through transitionRun", () => {
  // @ts-expect-error `status` is not a column updateRun may set.
  updateRun(ctx, row, { status: "done" }, { type: "run.presented" });
  // @ts-expect-error identity and lineage columns never change.
  updateRun(ctx, row, { run_id: "other" }, { type: "run.presented" });
  // @ts-expect-error the revision belongs to the writer.
  updateRun(ctx, row, { revision: 7 }, { type: "run.presented" });
  // @ts-expect-error a status outside the run-status vocabulary.
  transitionRun(ctx, row, "paused", {}, { type: "run.parked", data: { reason: "paused" } });
  expectTypeOf(transitionRun).returns.toEqualTypeOf<number>();
});

test("the store writes only events of the trace vocabulary, with their payloads", () => {
  // @ts-expect-error an event name the vocabulary does not have.
  updateRun(ctx, row, {}, { type: "run.made_up" });
  // @ts-expect-error `node.started` names its node kind.
  updateRun(ctx, row, {}, { type: "node.started", path: "a", visit: 1 });
  // @ts-expect-error a node event names its node.
  updateRun(ctx, row, {}, { type: "node.succeeded" });
  // @ts-expect-error a retry's attempt is a number.
  updateRun(ctx, row, {}, { type: "node.retried", path: "a", visit: 1, data: { attempt: "2" } });
  // @ts-expect-error a run's end is recorded with a terminal event only.
  terminalize(ctx, row, { status: "failed", outcome: "failed", present: true }, { type: "run.parked" });
  updateRun(ctx, row, {}, { type: "run.presented" });
});
