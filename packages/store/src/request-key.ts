import { adopted, conflict, type RunRecord, type Transition } from "@piw/protocol";
import type { StoreContext } from "./context.js";
import { mapRunRow, type RunRow } from "./rows.js";

// A client names each action that creates a run with a request key, so the request can be sent again
// after its reply was lost. The key is unique across all runs (`runs_request_key`).

/** The run that a request key already created, if any. */
export function runWithRequestKey(ctx: StoreContext, requestKey: string | undefined): RunRow | undefined {
  if (requestKey === undefined) return undefined;
  return ctx.selectRow("runs", "WHERE request_key = ?", requestKey);
}

/** A repeated key: the saved run if the request is the one that created it, else a conflict naming it. */
export function repeatedRequest(saved: RunRow, sameRequest: boolean): Transition<RunRecord> {
  return sameRequest
    ? adopted(mapRunRow(saved))
    : conflict({ kind: "request_mismatch", resource: "run", id: saved.run_id });
}
