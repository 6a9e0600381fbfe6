import {
  addSpend,
  budgetExceededMessage,
  reachedLimit,
  RpcError,
  type SubmissionResult,
  type TurnRecord,
  type TurnUsage,
} from "@piw/protocol";
import type { RunStore } from "@piw/store";
import { agentTurnEnding } from "./agent-channel.js";
import type { LiveWorker } from "./live-worker.js";
import { turnStopReason } from "./turn-abort.js";
import { saveTurnProgress } from "./turn-progress.js";

export interface WorkflowTurnDeps {
  store: RunStore;
  /** The accepted worker running the run now (its current generation), if any. */
  currentWorker(runId: string): Pick<LiveWorker, "agent" | "fence" | "liveSpend"> | undefined;
  /** The run changed: reconcile and publish its view. */
  runChanged(runId: string): void;
}

/**
 * A Pi session's workflow turn, routed to the one visit it was started for (the turn-ownership
 * ownership): the model's submit and update, and the turn's end, reach the worker running that visit
 * now. The visit always comes from the session's open turn, never from the model.
 */
export class WorkflowTurns {
  constructor(private readonly deps: WorkflowTurnDeps) {}

  /**
   * The model's output for the step that owns the session's open turn: only that turn may submit, and
   * only for the visit it was started for. Resolves with the worker's verdict.
   */
  async submit(sessionId: string, output: unknown): Promise<SubmissionResult> {
    const { store } = this.deps;
    const turn = store.openSessionTurn(sessionId);
    if (!turn || turn.runId === null || turn.path === null || turn.visit === null) {
      // A submit after the host stopped the step's turn (a deadline, a cancel) says why.
      const last = store.latestWorkflowTurn(sessionId);
      const stopped =
        last?.runId != null
          ? turnStopReason(store.getRun(last.runId), last, store.listRunSteps(last.runId))
          : null;
      const why =
        stopped === null || stopped.includes("already succeeded")
          ? "submit only while answering a workflow step prompt."
          : `${stopped} It takes no more submissions.`;
      throw new RpcError("refused", `No workflow step owns this turn: ${why}`);
    }
    const run = store.getRun(turn.runId);
    const steps = store.listRunSteps(turn.runId);
    const stopped = turnStopReason(run, turn, steps);
    const step = steps.find((saved) => saved.path === turn.path && saved.visit === turn.visit);
    if (stopped !== null && (step?.status === "timed_out" || run?.status === "cancelled")) {
      throw new RpcError("refused", `${stopped} It takes no more submissions.`);
    }
    if (run?.status !== "running") {
      throw new RpcError(
        "refused",
        `Run ${turn.runId} is ${run?.status ?? "gone"}; its step ${turn.path} takes no submissions.`,
      );
    }
    if (step?.status !== "running") {
      // A second submit after the accepted one, in the same turn: nothing is waiting for it.
      throw new RpcError(
        "refused",
        `Workflow step ${turn.path} is already ${step?.status ?? "closed"}; end your turn, the workflow goes on by itself.`,
      );
    }
    const worker = this.deps.currentWorker(turn.runId);
    if (!worker) {
      throw new RpcError(
        "refused",
        `Run ${turn.runId} has no running worker for step ${turn.path} right now; submit again shortly.`,
      );
    }
    return worker.agent.submit({ path: turn.path, visit: turn.visit }, output);
  }

  /** The model's progress on the step the session's open turn runs (the workflow tool's `update`). */
  update(sessionId: string, update: Record<string, unknown>): { runId: string; path: string; visit: number } {
    const fenceOf = (runId: string) => this.deps.currentWorker(runId)?.fence;
    const saved = saveTurnProgress({ store: this.deps.store, fenceOf }, sessionId, update);
    this.deps.runChanged(saved.runId);
    return saved;
  }

  /**
   * A Pi session's usage of its workflow turn so far, saved on the turn. At the run's budget (its
   * saved spend and its isolated sessions' live usage in parallel branches) the step hears of it (it
   * parks the run) and the answer is why the turn must stop, else null.
   */
  usage(report: TurnUsage): string | null {
    const saved = this.deps.store.recordTurnUsage(report);
    if (saved.kind !== "applied" && saved.kind !== "adopted") return null;
    const turn = saved.value;
    if (turn === null || turn.budget === null) return null;
    this.deps.runChanged(turn.runId);
    const worker = this.deps.currentWorker(turn.runId);
    const spend = worker === undefined ? turn.spend : addSpend(turn.spend, worker.liveSpend.pending());
    const limit = reachedLimit(turn.budget, spend, "during_turn");
    if (limit === null) return null;
    if (turn.path !== null && turn.visit !== null) {
      worker?.agent.budgetExceeded({ path: turn.path, visit: turn.visit });
    }
    return budgetExceededMessage(limit, turn.budget, spend);
  }

  /** A workflow turn ended without being answered by a submission (or was lost): tell its step. */
  turnEnded(turn: TurnRecord): void {
    if (turn.runId === null || turn.path === null || turn.visit === null) return;
    this.deps
      .currentWorker(turn.runId)
      ?.agent.turnEnded({ path: turn.path, visit: turn.visit }, agentTurnEnding(turn));
  }
}
