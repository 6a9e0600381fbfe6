import type { CheckpointAnswer, JsonValue, RunSnapshot, SafeError, SavedVisit } from "@piw/protocol";
import type { StoreContext } from "./context.js";
import { StoreError } from "./errors.js";
import type { RunRow } from "./rows.js";

function visitsOf(ctx: StoreContext, runId: string): SavedVisit[] {
  // rowid order is insertion order: the order the visits were opened, which retries do not change.
  const rows = ctx.selectRows("run_steps", "WHERE run_id = ? ORDER BY rowid", runId);
  return rows.map((r) => {
    const visit: SavedVisit = {
      path: r.path,
      visit: r.visit,
      nodeKind: r.node_kind as SavedVisit["nodeKind"],
      attempt: r.attempt,
      status: r.status,
      nextPath: r.next_path,
    };
    if (r.status === "succeeded")
      visit.output = r.output_hash === null ? null : ctx.readJsonBlob(r.output_hash);
    // A routed shell failure keeps the command's report for the nodes after it.
    else if (r.output_hash !== null) visit.output = ctx.readJsonBlob(r.output_hash);
    if ((r.status === "failed" || r.status === "timed_out") && r.error_code !== null) {
      visit.error = {
        code: r.error_code as SafeError["code"],
        message: r.error_hash === null ? "" : ctx.readTextBlob(r.error_hash),
      };
    }
    return visit;
  });
}

function acceptedOf(ctx: StoreContext, row: RunRow): CheckpointAnswer | null {
  if (row.origin_command !== "continue" || row.accepted_path === null || row.accepted_visit === null)
    return null;
  return {
    path: row.accepted_path,
    visit: row.accepted_visit,
    answer: row.accepted_answer_hash === null ? null : ctx.readJsonBlob(row.accepted_answer_hash),
  };
}

/**
 * Everything an executor needs to rebuild a run's position. A continuation carries the outputs of
 * the chain of waiting runs it continues; a restart or a fresh start carries nothing.
 */
export function readRunSnapshot(ctx: StoreContext, runId: string): RunSnapshot {
  return ctx.read(() => {
    const row = ctx.getRunRow(runId);
    if (!row) throw new StoreError("not_found", `No run ${runId}.`);
    // Only a launch that ended before it ran has no input, and an ended run is never executed.
    if (row.input_hash === null) throw new StoreError("not_found", `Run ${runId} has no input to run with.`);
    const input = ctx.readJsonBlob(row.input_hash);
    const chain: RunRow[] = [];
    let current = row;
    while (current.origin_command === "continue" && current.parent_run_id !== null) {
      const parent = ctx.getRunRow(current.parent_run_id);
      if (!parent) break;
      chain.push(parent);
      current = parent;
    }
    const carried: Record<string, JsonValue> = {};
    for (const ancestor of chain.reverse()) {
      const accepted = acceptedOf(ctx, ancestor);
      if (accepted) carried[accepted.path] = accepted.answer;
      for (const visit of visitsOf(ctx, ancestor.run_id)) {
        if (visit.status === "succeeded") carried[visit.path] = visit.output ?? null;
      }
    }
    return {
      runId: row.run_id,
      input,
      visits: visitsOf(ctx, row.run_id),
      carriedOutputs: carried,
      accepted: acceptedOf(ctx, row),
      stepCount: row.step_count,
    };
  });
}
