import {
  type ClientMethod,
  type ClientParams,
  quickRunSummaries,
  quickRunView,
  type RunSummary,
  type RunView,
} from "@piw/protocol";
import { QuickSession } from "./quick-session.js";

/** `runs.list` on the running host, the quick way (see quickCall). */
export function quickListRuns(
  stateDir: string,
  params: ClientParams<"runs.list">,
): Promise<RunSummary[] | undefined> {
  return quickCall(stateDir, "runs.list", params, quickRunSummaries);
}

/** `runs.get` on the running host, the quick way (see quickCall); undefined for a missing run too. */
export function quickGetRun(stateDir: string, runId: string): Promise<RunView | undefined> {
  return quickCall(stateDir, "runs.get", { runId }, quickRunView);
}

/**
 * One call on the running host, the quick way (see QuickSession): resolves with the checked result,
 * or with undefined whenever anything is other than plain; the caller then does what it would have
 * done anyway. Nothing here starts a host or changes anything.
 */
async function quickCall<M extends ClientMethod, T>(
  stateDir: string,
  method: M,
  params: ClientParams<M>,
  check: (result: unknown) => T | undefined,
): Promise<T | undefined> {
  const session = QuickSession.open(stateDir);
  if (session === undefined) return undefined;
  try {
    return await session.call(method, params, check);
  } finally {
    session.close();
  }
}
