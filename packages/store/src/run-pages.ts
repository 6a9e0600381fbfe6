import { hasRunStatus, type RunRecord, type RunRecordOf, type RunStatus } from "@piw/protocol";
import type { StoreContext } from "./context.js";
import { mapRunRow, type RunRow } from "./rows.js";

/** Runs read per page when a caller must see every run of some statuses. */
export const RUN_PAGE_SIZE = 500;

/** Where the previous page ended: the next page starts after this run. */
interface RunPageCursor {
  createdAt: number;
  runId: string;
}

interface RunPageQuery {
  statuses: readonly RunStatus[];
  after?: RunPageCursor;
  limit: number;
}

/**
 * One page of the runs in these statuses, oldest first. Keyset on (created_at, run_id), not OFFSET:
 * a run that leaves the statuses between pages does not shift the rows after it, so every run that
 * keeps its status is read exactly once.
 */
function listRunsPage(ctx: StoreContext, query: RunPageQuery): RunRecord[] {
  if (query.statuses.length === 0) return [];
  return ctx.read(() => {
    const statuses = `status IN (${query.statuses.map(() => "?").join(", ")})`;
    const { limit } = query;
    if (query.after === undefined) {
      const sql = `SELECT * FROM runs WHERE ${statuses} ORDER BY created_at, run_id LIMIT ?`;
      return (ctx.stmt(sql).all(...query.statuses, limit) as RunRow[]).map(mapRunRow);
    }
    const { createdAt, runId } = query.after;
    const sql = `SELECT * FROM runs WHERE ${statuses} AND (created_at > ? OR (created_at = ? AND run_id > ?))
      ORDER BY created_at, run_id LIMIT ?`;
    return (ctx.stmt(sql).all(...query.statuses, createdAt, createdAt, runId, limit) as RunRow[]).map(
      mapRunRow,
    );
  });
}

/**
 * Every run in these statuses, oldest first, read a page at a time so that no fixed cap skips any.
 * Each page is its own read: the caller may change runs between the ones it is given.
 */
export function* eachRun<S extends RunStatus>(
  ctx: StoreContext,
  statuses: readonly S[],
  pageSize = RUN_PAGE_SIZE,
): Generator<RunRecordOf<S>, void, undefined> {
  const limit = Math.max(1, Math.floor(pageSize));
  let after: RunPageCursor | undefined;
  for (;;) {
    const page = listRunsPage(ctx, after === undefined ? { statuses, limit } : { statuses, after, limit });
    // The query selected these statuses; the guard lets the type say so.
    yield* page.filter((run) => hasRunStatus(run, statuses));
    const last = page.at(-1);
    if (last === undefined || page.length < limit) return;
    after = { createdAt: last.createdAt, runId: last.runId };
  }
}
