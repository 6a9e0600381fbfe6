import {
  adopted,
  applied,
  conflict,
  type EnqueueMessage,
  type Fence,
  isTerminalStatus,
  type MessageRecord,
  runMessageId,
  type Transition,
} from "@piw/protocol";
import { isConflict, notRunning, type StoreContext } from "./context.js";
import { StoreError } from "./errors.js";
import { readPresentationInstructions, readTerminalFacts } from "./terminal-readers.js";
import type { MessageRow, RunRow } from "./rows.js";
import { updateRun } from "./run-writes.js";
import { type NewMessage, terminalMessages } from "./terminal-messages.js";

function mapMessage(ctx: StoreContext, row: MessageRow): MessageRecord {
  return {
    messageId: row.message_id,
    runId: row.run_id,
    sessionId: row.session_id,
    kind: row.kind,
    path: row.path,
    visit: row.visit,
    body: ctx.readTextBlob(row.body_hash),
    triggerTurn: row.trigger_turn === 1,
    status: row.status,
    createdAt: row.created_at,
    deliveredAt: row.delivered_at,
  };
}

function getMessage(ctx: StoreContext, messageId: string): MessageRow | undefined {
  return ctx.selectRow("messages", "WHERE message_id = ?", messageId);
}

function insertMessage(ctx: StoreContext, run: RunRow, msg: NewMessage): void {
  ctx
    .stmt(
      `INSERT INTO messages (message_id, run_id, session_id, kind, path, visit, body_hash, trigger_turn, status, created_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, 'pending', ?) ON CONFLICT (message_id) DO NOTHING`,
    )
    .run(
      msg.messageId,
      run.run_id,
      run.origin_session,
      msg.kind,
      msg.path,
      msg.visit,
      ctx.putText(msg.body),
      msg.triggerTurn ? 1 : 0,
      ctx.now(),
    );
}

/** Queue a step prompt or notification for the run's session. The ID is derived by the engine. */
export function enqueueMessage(
  ctx: StoreContext,
  fence: Fence,
  req: EnqueueMessage,
): Transition<MessageRecord> {
  return ctx.tx(() => {
    const row = ctx.fencedRun(fence);
    if (isConflict(row)) return conflict(row);
    const existing = getMessage(ctx, req.messageId);
    if (existing) {
      const same =
        existing.run_id === row.run_id &&
        existing.kind === req.kind &&
        existing.path === req.path &&
        existing.visit === req.visit &&
        existing.trigger_turn === (req.triggerTurn ? 1 : 0) &&
        existing.body_hash === ctx.textHash(req.body);
      return same
        ? adopted(mapMessage(ctx, existing))
        : conflict({ kind: "request_mismatch", resource: "message", id: req.messageId });
    }
    if (row.status !== "running") {
      return conflict(notRunning(row));
    }
    insertMessage(ctx, row, { ...req });
    updateRun(
      ctx,
      row,
      {},
      {
        type: "message.queued",
        path: req.path,
        visit: req.visit,
        data: { kind: req.kind, messageId: req.messageId },
      },
      { progress: true },
    );
    return applied(mapMessage(ctx, ctx.writtenRow("messages", "WHERE message_id = ?", req.messageId)));
  });
}

/** Lease a session's deliverable messages to one deliverer; expired leases are taken over. */
export function claimMessages(
  ctx: StoreContext,
  req: { sessionId: string; claimToken: string; leaseMs: number; limit?: number },
): Transition<MessageRecord[]> {
  return ctx.tx(() => {
    const now = ctx.now();
    const rows = ctx.selectRows(
      "messages",
      `WHERE session_id = ? AND (status = 'pending' OR (status = 'claimed' AND lease_expires_at <= ?))
         ORDER BY created_at, rowid LIMIT ?`,
      req.sessionId,
      now,
      Math.max(1, Math.min(req.limit ?? 50, 500)),
    );
    if (rows.length === 0) return adopted([]);
    const touched = new Set<string>();
    for (const row of rows) {
      ctx
        .stmt(
          "UPDATE messages SET status = 'claimed', claim_token = ?, lease_expires_at = ? WHERE message_id = ?",
        )
        .run(req.claimToken, now + req.leaseMs, row.message_id);
      row.status = "claimed";
      touched.add(row.run_id);
    }
    for (const runId of touched) {
      const run = ctx.getRunRow(runId);
      if (run) updateRun(ctx, run, {}, { type: "message.claimed" });
    }
    return applied(rows.map((r) => mapMessage(ctx, r)));
  });
}

/**
 * The deliverer gives a claimed message back (Pi started a turn before it could be sent): it is pending
 * again, first in line at the next claim. A message the run's end cancelled stays cancelled.
 */
export function releaseMessage(
  ctx: StoreContext,
  req: { sessionId: string; messageId: string },
): Transition<MessageRecord> {
  return ctx.tx(() => {
    const row = getMessage(ctx, req.messageId);
    if (!row || row.session_id !== req.sessionId) {
      return conflict({ kind: "not_found", resource: "message", id: req.messageId });
    }
    if (row.status === "pending") return adopted(mapMessage(ctx, row));
    if (row.status !== "claimed") {
      return conflict({
        kind: "state_mismatch",
        resource: "message",
        id: req.messageId,
        expected: "claimed",
        actual: row.status,
      });
    }
    // Only the claimed row of this session moves; the deliverer owns it until its lease runs out.
    ctx
      .stmt(
        "UPDATE messages SET status = 'pending', claim_token = NULL, lease_expires_at = NULL WHERE message_id = ? AND session_id = ? AND status = 'claimed'",
      )
      .run(req.messageId, req.sessionId);
    return applied(mapMessage(ctx, { ...row, status: "pending" }));
  });
}

function settleMessage(
  ctx: StoreContext,
  messageId: string,
  to: "delivered" | "cancelled",
): Transition<MessageRecord> {
  return ctx.tx(() => {
    const row = getMessage(ctx, messageId);
    if (!row) return conflict({ kind: "not_found", resource: "message", id: messageId });
    if (row.status === to) return adopted(mapMessage(ctx, row));
    if (row.status !== "pending" && row.status !== "claimed") {
      return conflict({
        kind: "state_mismatch",
        resource: "message",
        id: messageId,
        expected: "pending",
        actual: row.status,
      });
    }
    const deliveredAt = to === "delivered" ? ctx.now() : null;
    ctx
      .stmt(
        "UPDATE messages SET status = ?, claim_token = NULL, lease_expires_at = NULL, delivered_at = ? WHERE message_id = ?",
      )
      .run(to, deliveredAt, messageId);
    const run = ctx.getRunRow(row.run_id);
    if (run)
      updateRun(
        ctx,
        run,
        {},
        {
          type: to === "delivered" ? "message.delivered" : "message.cancelled",
          path: row.path,
          visit: row.visit,
          data: { messageId },
        },
      );
    return applied(mapMessage(ctx, { ...row, status: to, delivered_at: deliveredAt }));
  });
}

/** The extension saw the message in the Pi session (or appended it): record the acknowledgement. */
export function markMessageDelivered(
  ctx: StoreContext,
  req: { messageId: string },
): Transition<MessageRecord> {
  return settleMessage(ctx, req.messageId, "delivered");
}

export function cancelMessage(ctx: StoreContext, req: { messageId: string }): Transition<MessageRecord> {
  return settleMessage(ctx, req.messageId, "cancelled");
}

export function listSessionMessages(
  ctx: StoreContext,
  sessionId: string,
  statuses: MessageRecord["status"][] = ["pending", "claimed"],
): MessageRecord[] {
  return ctx.read(() =>
    ctx
      .selectRows(
        "messages",
        `WHERE session_id = ? AND status IN (${statuses.map(() => "?").join(", ")}) ORDER BY created_at, rowid`,
        sessionId,
        ...statuses,
      )
      .map((r) => mapMessage(ctx, r)),
  );
}

function savedTerminalMessages(ctx: StoreContext, runId: string): MessageRecord[] {
  return ctx
    .selectRows(
      "messages",
      "WHERE run_id = ? AND kind IN ('launch_failure', 'terminal', 'presentation') ORDER BY created_at, rowid",
      runId,
    )
    .map((r) => mapMessage(ctx, r));
}

/**
 * Create a terminal run's messages from its saved facts, once. Safe to repeat after a host restart.
 * A failure is recorded on the run for repair; it never touches the terminal state itself.
 */
export function createTerminalMessages(
  ctx: StoreContext,
  req: { runId: string },
): Transition<MessageRecord[]> {
  try {
    return ctx.tx(() => {
      const row = ctx.getRunRow(req.runId);
      if (!row) return conflict({ kind: "not_found", resource: "run", id: req.runId });
      // `none` means "nothing to present" only once the run is terminal; a live run has no facts yet.
      if (
        row.presentation_state === "created" ||
        (row.presentation_state === "none" && isTerminalStatus(row.status))
      ) {
        return adopted(savedTerminalMessages(ctx, row.run_id));
      }
      const facts = readTerminalFacts(ctx, row.run_id);
      if (facts.kind === "not_terminal") {
        return conflict({
          kind: "state_mismatch",
          resource: "run",
          id: row.run_id,
          expected: "terminal",
          actual: facts.status,
        });
      }
      const instructions = readPresentationInstructions(ctx, row.run_id);
      for (const msg of terminalMessages(facts.facts.run, instructions, row)) {
        insertMessage(ctx, row, msg);
      }
      updateRun(
        ctx,
        row,
        { presentation_state: "created", presentation_error: null },
        { type: "run.presented" },
      );
      return applied(savedTerminalMessages(ctx, row.run_id));
    });
  } catch (error) {
    if (!(error instanceof StoreError) || error.code === "store_busy") throw error;
    const reason = error.code;
    ctx.tx(() => {
      const row = ctx.getRunRow(req.runId);
      if (row)
        updateRun(
          ctx,
          row,
          { presentation_state: "failed", presentation_error: reason },
          { type: "run.presentation_failed", data: { code: reason } },
        );
    });
    return conflict({
      kind: "state_mismatch",
      resource: "message",
      id: runMessageId(req.runId, "terminal"),
      expected: "presentable facts",
      actual: reason,
    });
  }
}

/** Terminal runs whose messages were never created (or failed): the host repairs them after a restart. */
export function listRunsNeedingPresentation(ctx: StoreContext): string[] {
  return ctx.read(() =>
    (
      ctx
        .stmt(
          "SELECT run_id FROM runs WHERE presentation_state IN ('pending', 'failed') ORDER BY finished_at",
        )
        .all() as Array<{ run_id: string }>
    ).map((r) => r.run_id),
  );
}
