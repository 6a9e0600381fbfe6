import type {
  EndedRunRecord,
  MessageRecord,
  RunCommandType,
  RunRecord,
  RunRecordOf,
  TurnRecord,
} from "@piw/protocol";
import { describe, expectTypeOf, it } from "vitest";
import type { LaunchRow, MessageRow, RunRow, StepRow, TurnRow } from "../src/rows.js";

describe("row types are derived from the table descriptions", () => {
  it("maps SQLite types and nullability to TypeScript", () => {
    expectTypeOf<RunRow["run_id"]>().toEqualTypeOf<string>();
    expectTypeOf<RunRow["parent_run_id"]>().toEqualTypeOf<string | null>();
    expectTypeOf<RunRow["generation"]>().toEqualTypeOf<number>();
    expectTypeOf<RunRow["wake_at"]>().toEqualTypeOf<number | null>();
    expectTypeOf<StepRow["failed_attempts"]>().toEqualTypeOf<number>();
  });

  it("turns a CHECK value list into a literal union", () => {
    expectTypeOf<RunRow["paused"]>().toEqualTypeOf<0 | 1>();
    expectTypeOf<StepRow["status"]>().toEqualTypeOf<"running" | "succeeded" | "failed" | "timed_out">();
    expectTypeOf<LaunchRow["exit_kind"]>().toEqualTypeOf<"reported" | "lost" | "orphaned" | null>();
  });

  it("checks the same values the protocol's records carry", () => {
    expectTypeOf<RunRow["status"]>().toEqualTypeOf<RunRecord["status"]>();
    expectTypeOf<RunRow["outcome"]>().toEqualTypeOf<EndedRunRecord["outcome"] | null>();
    expectTypeOf<RunRow["origin_command"]>().toEqualTypeOf<RunRecord["originCommand"]>();
    expectTypeOf<RunRow["next_command"]>().toEqualTypeOf<RunRecord["nextCommand"]>();
    expectTypeOf<RunRow["presentation_state"]>().toEqualTypeOf<EndedRunRecord["presentationState"]>();
    expectTypeOf<RunRow["error_code"]>().toEqualTypeOf<RunRecordOf<"failed">["errorCode"] | null>();
    expectTypeOf<TurnRow["status"]>().toEqualTypeOf<TurnRecord["status"]>();
    expectTypeOf<TurnRow["end_reason"]>().toEqualTypeOf<TurnRecord["endReason"]>();
    expectTypeOf<MessageRow["kind"]>().toEqualTypeOf<MessageRecord["kind"]>();
    expectTypeOf<MessageRow["status"]>().toEqualTypeOf<MessageRecord["status"]>();
    expectTypeOf<LaunchRow["command_type"]>().toEqualTypeOf<RunCommandType>();
  });
});
