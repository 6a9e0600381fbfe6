import { applyProgressUpdate, type Fence, RpcError } from "@piw/protocol";
import type { RunStore } from "@piw/store";

export interface TurnProgressDeps {
  store: RunStore;
  /** The fence of the accepted worker running the run now, if any: the host saves with its claim. */
  fenceOf(runId: string): Fence | undefined;
}

/**
 * A model's `update` for the step its conversation's open turn runs (the turn-ownership rule): the
 * visit comes from the turn, never from the model, so it can only report on the step it is running.
 * Fields it leaves out keep their saved values. Refused, saving nothing: no open step turn, a step
 * that no longer runs, or an update that fails the progress rules.
 */
export function saveTurnProgress(
  deps: TurnProgressDeps,
  sessionId: string,
  update: Record<string, unknown>,
): { runId: string; path: string; visit: number } {
  const { store } = deps;
  const turn = store.openSessionTurn(sessionId);
  if (!turn || turn.runId === null || turn.path === null || turn.visit === null) {
    throw new RpcError(
      "refused",
      "No workflow step owns this turn: update only while running a workflow step.",
    );
  }
  const { runId, path, visit } = turn;
  const step = store.listRunSteps(runId).find((saved) => saved.path === path && saved.visit === visit);
  const fence = deps.fenceOf(runId);
  if (step?.status !== "running" || fence === undefined) {
    throw new RpcError("refused", `Workflow step ${path} is not running now; its progress cannot change.`);
  }
  const previous = store
    .listNodeProgress(runId)
    .find((saved) => saved.path === path && saved.visit === visit && saved.attempt === step.attempt);
  const checked = applyProgressUpdate(previous?.state ?? null, update);
  if (!checked.ok) throw new RpcError("invalid_params", `Invalid workflow update: ${checked.problem}.`);
  const saved = store.saveNodeProgress(fence, { path, visit, attempt: step.attempt, state: checked.state });
  if (saved.kind !== "applied") {
    throw new RpcError("refused", `Workflow step ${path} is not running now; its progress cannot change.`);
  }
  return { runId, path, visit };
}
