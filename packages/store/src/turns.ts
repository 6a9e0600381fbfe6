import {
  adopted,
  applied,
  conflict,
  type EndTurn,
  type StartTurn,
  type Transition,
  type TurnOwnership,
  type TurnRecord,
} from "@piw/protocol";
import { sha256 } from "./sha256.js";
import type { StoreContext } from "./context.js";
import { type MessageRow, mapTurnRow, type RunRow, type StepRow, type TurnRow } from "./rows.js";
import { updateRun } from "./run-writes.js";

export type { TurnOwnership };

/** The turn a Pi session reported under this request ID (one per pair: `turns_request`). */
export function turnByRequest(
  ctx: StoreContext,
  req: { sessionId: string; requestId: string },
): TurnRow | undefined {
  return ctx.selectRow("turns", "WHERE session_id = ? AND request_id = ?", req.sessionId, req.requestId);
}

function ownership(row: TurnRow): TurnOwnership {
  return row.status === "unowned"
    ? { owner: "none", turn: mapTurnRow(row) }
    : { owner: "workflow", turn: mapTurnRow(row) };
}

/** Whether the proposed message is a live step prompt of a running run, for this session's open visit. */
function owningStep(ctx: StoreContext, req: StartTurn): { run: RunRow; message: MessageRow } | undefined {
  const message = ctx.selectRow("messages", "WHERE message_id = ?", req.messageId);
  if (message?.kind !== "step_prompt" || message.session_id !== req.sessionId) return undefined;
  if (message.status === "cancelled" || message.path === null || message.visit === null) return undefined;
  const run = ctx.getRunRow(message.run_id);
  if (run?.status !== "running") return undefined;
  const step = ctx
    .stmt("SELECT status FROM run_steps WHERE run_id = ? AND path = ? AND visit = ?")
    .get(run.run_id, message.path, message.visit) as Pick<StepRow, "status"> | undefined;
  return step?.status === "running" ? { run, message } : undefined;
}

/**
 * Pi `agent_start`: atomically decide whether the turn that carries `messageId` is a workflow turn.
 * The answer is saved under the request ID, so a repeated report gets the same answer.
 */
export function startTurn(ctx: StoreContext, req: StartTurn): Transition<TurnOwnership> {
  return ctx.tx(() => {
    const existing = turnByRequest(ctx, req);
    if (existing) {
      return existing.message_id === req.messageId
        ? adopted(ownership(existing))
        : conflict({ kind: "request_mismatch", resource: "turn", id: existing.turn_id });
    }
    // Hashed so that no choice of session and request IDs can make two turns share an ID.
    const turnId = `turn:${sha256(JSON.stringify([req.sessionId, req.requestId])).slice(0, 32)}`;
    const owner = owningStep(ctx, req);
    const open = ctx
      .stmt("SELECT turn_id FROM turns WHERE session_id = ? AND status = 'open'")
      .get(req.sessionId) as { turn_id: string } | undefined;
    if (owner && open) {
      return conflict({
        kind: "state_mismatch",
        resource: "turn",
        id: open.turn_id,
        expected: "ended",
        actual: "open",
      });
    }
    ctx
      .stmt(
        `INSERT INTO turns (turn_id, run_id, path, visit, session_id, request_id, message_id, status, started_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      )
      .run(
        turnId,
        owner?.run.run_id ?? null,
        owner?.message.path ?? null,
        owner?.message.visit ?? null,
        req.sessionId,
        req.requestId,
        req.messageId,
        owner ? "open" : "unowned",
        ctx.now(),
      );
    if (owner) {
      updateRun(
        ctx,
        owner.run,
        {},
        { type: "turn.started", path: owner.message.path, visit: owner.message.visit, data: { turnId } },
      );
    }
    const saved = ctx.writtenRow("turns", "WHERE turn_id = ?", turnId);
    return applied(ownership(saved));
  });
}

/** Pi `agent_end`: end exactly the turn that was accepted. Repeats adopt; other evidence conflicts. */
export function endTurn(ctx: StoreContext, req: EndTurn): Transition<TurnRecord> {
  return ctx.tx(() => {
    const turn = turnByRequest(ctx, req);
    if (!turn)
      return conflict({ kind: "not_found", resource: "turn", id: `${req.sessionId}:${req.requestId}` });
    if (turn.status === "ended" && turn.end_reason === req.reason) return adopted(mapTurnRow(turn));
    if (turn.status !== "open") {
      return conflict({
        kind: "state_mismatch",
        resource: "turn",
        id: turn.turn_id,
        expected: "open",
        actual: turn.status,
      });
    }
    ctx
      .stmt(
        "UPDATE turns SET status = 'ended', end_reason = ?, ended_at = ?, session_file = ?, first_entry_id = ?, last_entry_id = ? WHERE turn_id = ?",
      )
      .run(
        req.reason,
        ctx.now(),
        req.entries?.sessionFile ?? null,
        req.entries?.firstEntryId ?? null,
        req.entries?.lastEntryId ?? null,
        turn.turn_id,
      );
    const run = turn.run_id === null ? undefined : ctx.getRunRow(turn.run_id);
    if (run) {
      updateRun(
        ctx,
        run,
        {},
        { type: "turn.ended", path: turn.path, visit: turn.visit, data: { reason: req.reason } },
      );
    }
    return applied(mapTurnRow({ ...turn, status: "ended", end_reason: req.reason }));
  });
}

/** The session went idle or branched with turns still open: nothing proves them, so they are lost. */
export function settleSessionTurns(ctx: StoreContext, req: { sessionId: string }): Transition<TurnRecord[]> {
  return ctx.tx(() => {
    const open = ctx.selectRows("turns", "WHERE session_id = ? AND status = 'open'", req.sessionId);
    if (open.length === 0) return adopted([]);
    for (const turn of open) {
      ctx
        .stmt("UPDATE turns SET status = 'lost', ended_at = ? WHERE turn_id = ?")
        .run(ctx.now(), turn.turn_id);
      const run = turn.run_id === null ? undefined : ctx.getRunRow(turn.run_id);
      if (run) updateRun(ctx, run, {}, { type: "turn.lost", path: turn.path, visit: turn.visit });
    }
    return applied(open.map((t) => mapTurnRow({ ...t, status: "lost" })));
  });
}

/** The session's open workflow turn (at most one is ever open), or null. */
export function openSessionTurn(ctx: StoreContext, sessionId: string): TurnRecord | null {
  return ctx.read(() => {
    const row = ctx.selectRow(
      "turns",
      "WHERE session_id = ? AND status = 'open' ORDER BY started_at DESC LIMIT 1",
      sessionId,
    );
    return row ? mapTurnRow(row) : null;
  });
}

/** The session's latest turn that a workflow step owned, open or not: what a late submit came after. */
export function latestWorkflowTurn(ctx: StoreContext, sessionId: string): TurnRecord | null {
  return ctx.read(() => {
    const row = ctx.selectRow(
      "turns",
      "WHERE session_id = ? AND run_id IS NOT NULL ORDER BY started_at DESC, rowid DESC LIMIT 1",
      sessionId,
    );
    return row ? mapTurnRow(row) : null;
  });
}
