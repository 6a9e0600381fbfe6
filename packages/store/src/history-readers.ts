import type {
  HistoryEffect,
  HistoryMessage,
  HistoryStep,
  HistoryTurn,
  JsonValue,
  MessageKind,
} from "@piw/protocol";
import { stoppedVisitState } from "@piw/protocol";
import type { StoreContext } from "./context.js";
import { StoreError } from "./errors.js";
import { mapEffectRow } from "./readers.js";
import { type EffectRow, mapRunRow } from "./rows.js";

// What a viewer's inspector shows of a run beyond its view: saved outputs, errors, effects, the
// prompts sent to Pi and the turns that answered them. Values come back whole; the host bounds them.

export interface RunHistoryRecords {
  steps: HistoryStep[];
  effects: HistoryEffect[];
  messages: HistoryMessage[];
  turns: HistoryTurn[];
}

/** Every step, effect, message and turn of a run, oldest first; `not_found` for an unknown run. */
export function readRunHistory(ctx: StoreContext, runId: string): RunHistoryRecords {
  return ctx.read(() => {
    const row = ctx.getRunRow(runId);
    if (!row) throw new StoreError("not_found", `No run ${runId}.`);
    // A visit still open when its run stopped says why, as the run's view does.
    const stopped = stoppedVisitState(mapRunRow(row));
    const json = (hash: string | null) => (hash === null ? null : ctx.readJsonBlob(hash));
    const text = (hash: string | null) => (hash === null ? null : ctx.readTextBlob(hash));
    // A message body is saved as text or JSON, depending on its kind; both read back as text.
    const body = (hash: string) => {
      const row = ctx.stmt("SELECT media_type FROM blobs WHERE hash = ?").get(hash) as
        | { media_type: string }
        | undefined;
      return row?.media_type === "application/json"
        ? JSON.stringify(ctx.readJsonBlob(hash))
        : ctx.readTextBlob(hash);
    };
    const steps = (
      ctx.stmt("SELECT * FROM run_steps WHERE run_id = ? ORDER BY started_at, rowid").all(runId) as Array<{
        path: string;
        visit: number;
        attempt: number;
        status: "running" | "succeeded" | "failed" | "timed_out";
        output_hash: string | null;
        error_code: string | null;
        error_hash: string | null;
        started_at: number;
        finished_at: number | null;
      }>
    ).map((r) => ({
      path: r.path,
      visit: r.visit,
      attempt: r.attempt,
      status: r.status === "running" ? (stopped ?? r.status) : r.status,
      startedAt: r.started_at,
      finishedAt: r.finished_at,
      errorCode: r.error_code,
      error: text(r.error_hash),
      output: json(r.output_hash),
    }));
    const effects = (
      ctx
        .stmt("SELECT * FROM effects WHERE run_id = ? ORDER BY reserved_at, effect_id")
        .all(runId) as EffectRow[]
    ).map((r) => ({
      ...mapEffectRow(r),
      request: json(r.request_hash) as JsonValue,
      result: json(r.result_hash),
      errorCode: r.error_code,
      error: text(r.error_hash),
      reservedAt: r.reserved_at,
      settledAt: r.settled_at,
    }));
    const messages = (
      ctx
        .stmt("SELECT * FROM messages WHERE run_id = ? ORDER BY created_at, message_id")
        .all(runId) as Array<{
        message_id: string;
        kind: MessageKind;
        path: string | null;
        visit: number | null;
        status: HistoryMessage["status"];
        body_hash: string;
        created_at: number;
        delivered_at: number | null;
      }>
    ).map((r) => ({
      messageId: r.message_id,
      kind: r.kind,
      path: r.path,
      visit: r.visit,
      status: r.status,
      body: body(r.body_hash),
      createdAt: r.created_at,
      deliveredAt: r.delivered_at,
    }));
    const turns = (
      ctx.stmt("SELECT * FROM turns WHERE run_id = ? ORDER BY started_at, turn_id").all(runId) as Array<{
        turn_id: string;
        path: string | null;
        visit: number | null;
        status: HistoryTurn["status"];
        end_reason: string | null;
        started_at: number;
        ended_at: number | null;
      }>
    ).map((r) => ({
      turnId: r.turn_id,
      path: r.path,
      visit: r.visit,
      status: r.status,
      endReason: r.end_reason,
      startedAt: r.started_at,
      endedAt: r.ended_at,
    }));
    return { steps, effects, messages, turns };
  });
}
