import { randomUUID } from "node:crypto";
import {
  type AgentTurnEnding,
  RpcError,
  type SubmissionResult,
  type TurnRecord,
  type WorkerResult,
} from "@piw/protocol";

type AgentNext = WorkerResult<"agent.next">;

/** Where an agent event belongs: the one visit of one node that the worker waits on. */
interface VisitKey {
  path: string;
  visit: number;
}

interface Waiter extends VisitKey {
  resolve(event: AgentNext): void;
  reject(error: RpcError): void;
}

interface PendingSubmission {
  runId: string;
  path: string;
  resolve(result: SubmissionResult): void;
  reject(error: RpcError): void;
}

/** How long a submission may wait for the worker's verdict before the model is told to try again. */
const VERDICT_TIMEOUT_MS = 60_000;

const sameVisit = (a: VisitKey, b: VisitKey) => a.path === b.path && a.visit === b.visit;

/**
 * What passes between a Pi session and one worker's open agent step, in memory only: nothing here is
 * state. An accepted output becomes state when the worker finishes the visit; a submission lost with
 * a worker is answered with an error the model can act on, and the relaunched step prompts again.
 *
 * Events for a visit the worker is not waiting on yet are held; events for any other visit are stale
 * (a turn that ended after its step was already accepted) and are dropped when the worker moves on.
 */
export class AgentChannel {
  private waiter: Waiter | null = null;
  private readonly held: Array<VisitKey & { event: AgentNext }> = [];
  private readonly submissions = new Map<string, PendingSubmission>();
  private pauseRequested = false;
  private closedWith: RpcError | null = null;

  constructor(private readonly runId: string) {}

  /** The worker's `agent.next` long poll for one visit. */
  next(key: VisitKey): Promise<AgentNext> {
    if (this.closedWith) return Promise.reject(this.closedWith);
    if (this.pauseRequested) return Promise.resolve({ type: "paused" });
    const index = this.held.findIndex((held) => sameVisit(held, key));
    // Anything held for another visit belongs to a step that is over.
    const event = index >= 0 ? this.held[index]?.event : undefined;
    for (const stale of this.held) {
      if (stale.event !== event && stale.event.type === "submission") {
        this.submissions
          .get(stale.event.submissionId)
          ?.reject(new RpcError("refused", `Workflow step ${stale.path} is no longer open.`));
      }
    }
    this.held.length = 0;
    if (event) return Promise.resolve(event);
    this.waiter?.reject(new RpcError("refused", "A newer agent wait replaced this one."));
    return new Promise<AgentNext>((resolve, reject) => {
      this.waiter = { ...key, resolve, reject };
    });
  }

  /** Hand the model's output to the step and wait for the worker's verdict. */
  submit(key: VisitKey, output: unknown): Promise<SubmissionResult> {
    if (this.closedWith) return Promise.reject(this.closedWith);
    const submissionId = randomUUID();
    const result = new Promise<SubmissionResult>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.submissions.delete(submissionId);
        reject(
          new RpcError(
            "refused",
            `The workflow step ${key.path} did not answer the submission in time; submit again.`,
          ),
        );
      }, VERDICT_TIMEOUT_MS);
      timer.unref();
      const settle =
        <T>(fn: (value: T) => void) =>
        (value: T) => {
          clearTimeout(timer);
          this.submissions.delete(submissionId);
          fn(value);
        };
      this.submissions.set(submissionId, {
        runId: this.runId,
        path: key.path,
        resolve: settle(resolve),
        reject: settle(reject),
      });
    });
    this.deliver(key, { type: "submission", submissionId, output });
    return result;
  }

  /** The worker's `agent.verdict`; an unknown ID (timed out, or answered twice) is ignored. */
  verdict(submissionId: string, verdict: { accepted: true } | { accepted: false; reason: string }): void {
    const pending = this.submissions.get(submissionId);
    if (!pending) return;
    pending.resolve(
      verdict.accepted ? { accepted: true, runId: pending.runId, path: pending.path } : verdict,
    );
  }

  /** The step's turn ended (completed, errored or lost) without settling it. */
  turnEnded(key: VisitKey, ending: AgentTurnEnding): void {
    this.deliver(key, { type: "turn_ended", ending });
  }

  /** The turn's usage reached the run's budget: the step checks it with the store (which parks). */
  budgetExceeded(key: VisitKey): void {
    this.deliver(key, { type: "budget_exceeded" });
  }

  /** The run was asked to pause: the waiting step parks now instead of at the next node boundary. */
  pause(): void {
    this.pauseRequested = true;
    const waiter = this.waiter;
    this.waiter = null;
    waiter?.resolve({ type: "paused" });
  }

  /** The run no longer needs this channel (stopped, superseded, worker gone): fail everything waiting. */
  close(message: string): void {
    const error = new RpcError("refused", message);
    this.closedWith ??= error;
    this.waiter?.reject(error);
    this.waiter = null;
    this.held.length = 0;
    for (const pending of [...this.submissions.values()]) {
      pending.reject(new RpcError("refused", "The workflow step stopped before it judged the submission."));
    }
  }

  private deliver(key: VisitKey, event: AgentNext): void {
    const waiter = this.waiter;
    if (waiter && sameVisit(waiter, key)) {
      this.waiter = null;
      waiter.resolve(event);
      return;
    }
    this.held.push({ ...key, event });
  }
}

/**
 * Whose doing a turn's end was, for the step's budgets: only a turn the model ended normally is the
 * model's. A provider error and a lost turn (Pi crashed, the session ended, the host settled an
 * unproved turn) are not.
 */
export function agentTurnEnding(turn: Pick<TurnRecord, "status" | "endReason">): AgentTurnEnding {
  switch (turn.status) {
    case "ended":
      switch (turn.endReason) {
        case "completed":
          return "completed";
        case "error":
          return "error";
        case "model_unavailable":
          return "model_unavailable";
        // An aborted turn pauses its run before it gets here; if one did, the model did not end it.
        case "aborted":
        case null:
          return "lost";
        default:
          return turn.endReason satisfies never;
      }
    case "lost":
    case "open":
    case "unowned":
      return "lost";
    default:
      return turn.status satisfies never;
  }
}
