import {
  type Answerer,
  type Budget,
  type ClientParams,
  type JsonValue,
  newRunId,
  type PrepareContinuation,
  type RequestKey,
  type RunRecord,
  type RunSummary,
  type Transition,
} from "@piw/protocol";
import { type RunStore, StoreError } from "@piw/store";
import { buildRunSummary } from "./build-run-view.js";
import type { HostCrashHook } from "./crash-hook.js";
import { describeBug } from "./host-errors.js";
import type { HostLog } from "./host-log.js";
import type { Supervisor } from "./supervisor.js";

export interface RunControlDeps {
  store: RunStore;
  supervisor: Supervisor;
  log: HostLog;
  now(): number;
  crash: HostCrashHook;
  /** A session settled: runs due on the clock that its busy session held back may wake now. */
  wakeDue?: () => void;
}

/**
 * The client's run commands. Each is one store transition, then the scheduling it implies: CLI runs
 * activate at once, Pi runs when their session is idle (idle-activation rule), a cancel stops the live worker.
 */
export class RunControl {
  constructor(private readonly deps: RunControlDeps) {}

  reserve(params: ClientParams<"runs.reserve">): Transition<RunSummary> {
    // Before the transaction: the idle worker's load overlaps it (a Pi run's may wait for its session).
    this.deps.supervisor.wakeIdleWorker();
    const runId = newRunId(params.workflowName, this.deps.now());
    const reserved = this.deps.store.reservePreparedRun({ ...params, runId });
    return this.afterCreate(reserved, "reserved");
  }

  /** `by`: who asked, as the client's code path says; a person unless it is the model's tool. */
  cancel(runId: string, by: Answerer = "human"): Transition<RunSummary> {
    const cancelled = this.deps.store.cancelRun({ runId, by });
    if (cancelled.kind === "applied") {
      this.deps.log(`run ${runId}: cancelled by request`);
      this.deps.supervisor.cancelWorkers(runId);
    }
    this.deps.supervisor.runChanged(runId);
    return this.summarize(cancelled);
  }

  pause(runId: string): Transition<RunSummary> {
    const paused = this.deps.store.requestPause({ runId });
    this.deps.supervisor.runChanged(runId);
    return this.summarize(paused);
  }

  /**
   * An explicit resume: the store decides whether the run may resume (progress rule: never automatic after
   * no progress). `acceptChanges` lets the worker go on under a changed workflow file, if it fits.
   */
  resume(runId: string, how: { acceptChanges?: boolean; budget?: Budget } = {}): Transition<RunSummary> {
    if (how.budget !== undefined) {
      // The new limits are saved before the claim, so the resumed worker's first check sees them.
      const raised = this.deps.store.raiseBudget({ runId, budget: how.budget });
      if (raised.kind === "conflict" || raised.kind === "recoveryRequired") return raised;
    }
    const claimed = this.deps.supervisor.activate(runId, "resumed by request", {
      resume: true,
      ...(how.acceptChanges === true ? { acceptChanges: true as const } : {}),
    });
    if (claimed.kind === "conflict" || claimed.kind === "recoveryRequired") return claimed;
    // A resume waiting for a worker is accepted: its summary says it waits in line.
    return { kind: claimed.kind === "adopted" ? "adopted" : "applied", value: this.summaryOf(runId) };
  }

  /** A person settled the manual effect a parked run stopped at: record it, then resume the run. */
  resolveEffect(params: ClientParams<"runs.resolveEffect">): Transition<RunSummary> {
    const resolved = this.deps.store.resolveManualEffect(params);
    this.deps.supervisor.runChanged(params.runId);
    if (resolved.kind !== "applied") return this.summarize(resolved);
    this.deps.log(
      `run ${params.runId}: manual effect ${params.effectId} resolved (happened: ${params.happened})`,
    );
    return this.resume(params.runId);
  }

  /**
   * Answer the checkpoint a waiting run stopped at: a continuation child carries the answer forward.
   * Whether the run may be answered now, at which checkpoint and by whom, is the store's decision.
   */
  answer(
    runId: string,
    answer: JsonValue,
    requestKey: RequestKey | undefined,
    answerer: PrepareContinuation["answerer"],
  ): Transition<RunSummary> {
    const childId = this.childRunId(runId);
    return this.afterCreate(
      this.deps.store.prepareContinuation({
        runId: childId,
        parentRunId: runId,
        accepted: { answer },
        answerer,
        ...(requestKey === undefined ? {} : { requestKey }),
      }),
      `continuation of ${runId}`,
    );
  }

  /**
   * The wake clock found `runId` due. A run waiting at an approval gate whose deadline passed
   * continues with the gate's saved default, as an automatic answer; false for any other run.
   */
  answerAtDeadline(runId: string): boolean {
    const timeout = this.deps.store.readAnswerCheck(runId)?.timeout ?? null;
    if (timeout === null) return false;
    const early = timeout.at - this.deps.now();
    if (early > 0) {
      // The clock fires its lead early, for workers to start in time; a gate never answers before its deadline.
      setTimeout(() => this.answerAtDeadline(runId), early).unref();
      return true;
    }
    const made = this.answer(runId, timeout.answer, undefined, "automatic");
    if (made.kind === "applied") {
      this.deps.log(`run ${runId}: its gate's deadline passed; default taken`);
      // Watchers of the parent see who continued it.
      this.deps.supervisor.runChanged(runId);
    }
    return true;
  }

  restart(runId: string, requestKey: RequestKey): Transition<RunSummary> {
    const childId = this.childRunId(runId);
    return this.afterCreate(
      this.deps.store.prepareRestart({ runId: childId, parentRunId: runId, requestKey }),
      `restart of ${runId}`,
    );
  }

  /** The session is idle: activate its queued runs (at most one holds the reservation). */
  sessionSettled(sessionId: string): string[] {
    const queued = this.deps.store.listRuns({ statuses: ["queued"], sessionId }).reverse();
    const activated: string[] = [];
    for (const run of queued) {
      const claimed = this.deps.supervisor.activate(run.runId, `session ${sessionId} settled`);
      if (claimed.kind === "applied" || claimed.kind === "waiting") activated.push(run.runId);
    }
    this.deps.wakeDue?.();
    return activated;
  }

  /**
   * Activate a queued run now when no Pi session holds it (the CLI's, a schedule's); Pi runs wait for
   * their session to settle.
   */
  activateIfCli(run: RunRecord, why: string): void {
    if (run.status !== "queued" || run.origin.kind === "pi") return;
    try {
      this.deps.supervisor.activate(run.runId, why);
    } catch (error) {
      this.deps.log(`run ${run.runId}: activation failed: ${describeBug(error)}`);
    }
  }

  /** A child run is named after its parent's workflow; a missing parent is the store's `not_found`. */
  private childRunId(parentRunId: string): string {
    return newRunId(this.deps.store.getRun(parentRunId)?.workflowName ?? "run", this.deps.now());
  }

  summaryOf(runId: string): RunSummary {
    const run = this.deps.store.getRun(runId);
    if (!run) throw new StoreError("not_found", `No run ${runId}.`);
    return buildRunSummary(this.deps.store, run, this.deps.supervisor);
  }

  private summarize(t: Transition<RunRecord>): Transition<RunSummary> {
    if (t.kind === "conflict" || t.kind === "recoveryRequired") return t;
    return { kind: t.kind, value: this.summaryOf(t.value.runId) };
  }

  /** A new queued run: answer with its summary first, then activate it (reserve-to-reply stays short). */
  afterCreate(created: Transition<RunRecord>, what: string): Transition<RunSummary> {
    if (created.kind === "applied") {
      const run = created.value;
      this.deps.log(`run ${run.runId}: queued (${what}, origin ${run.origin.kind})`);
      this.deps.supervisor.runChanged(run.runId);
      setImmediate(() => {
        try {
          const current = this.deps.store.getRun(run.runId);
          if (current) this.activateIfCli(current, `started (${what})`);
        } catch (error) {
          this.deps.log(`run ${run.runId}: activation failed: ${describeBug(error)}`);
        }
      });
      this.deps.crash.reach("after-create");
    }
    // A client sent the request again (its reply was lost): it gets the run it already made.
    if (created.kind === "adopted")
      this.deps.log(
        `run ${created.value.runId}: the same request again (${what}); answered with the saved run`,
      );
    return this.summarize(created);
  }
}
