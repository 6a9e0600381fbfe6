import {
  type AdvanceNodeVisit,
  type AgentTurnEnding,
  adopted,
  type Budget,
  budgetVerdict,
  type BudgetLimit,
  type BudgetSpend,
  applied,
  type CheckpointAnswer,
  type ClockReason,
  canonicalJson,
  conflict,
  type EffectState,
  type EnqueueMessage,
  effectRequestText,
  type FinishNodeVisit,
  isAllowedTransition,
  isClockReason,
  type JsonValue,
  type MessageRecord,
  manualEffectUnsettled,
  type NodeProgressReport,
  type NodeVisitAdvance,
  type NodeVisitState,
  PAUSED_AT_NODE_BOUNDARY,
  type RecoveryReason,
  type RedefineRun,
  type ReserveEffect,
  type RunEnding,
  type RunRecord,
  type RunSnapshot,
  recoveryRequired,
  type SavedVisit,
  type SettleEffect,
  type StartNodeVisit,
  type Transition,
  type VisitDeadline,
  type WorkerParams,
  NO_SPEND,
} from "@piw/protocol";
import { AgentEventQueue } from "./agent-event-queue.js";
import type { AgentEvent, RunPort, SubmissionVerdict } from "./run-port.js";

interface MemoryEffect {
  /** `<path>:<visit>` of the visit that reserved it. */
  visitKey: string;
  request: string;
  mode: "idempotent" | "manual";
  state: EffectState;
}

export interface MemoryRunOptions {
  runId?: string;
  input?: JsonValue;
  accepted?: CheckpointAnswer;
  carriedOutputs?: Record<string, JsonValue>;
}

/**
 * A run kept in memory with the store's rules for visits, effects and endings, for unit tests,
 * benchmarks and authors who want to exercise a workflow without a database. One run, one claim.
 */
export class MemoryRunPort implements RunPort {
  readonly runId: string;
  status: RunRecord["status"] = "starting";
  ending: RunEnding | null = null;
  parkedReason: RecoveryReason | null = null;
  pauseRequested = false;
  readonly visits: SavedVisit[] = [];
  /**
   * Each visit's deadline, fixed when it first opened. Unlike the store, this port does not move it
   * on by the time a run stood parked: its tests reopen at once, or mean to reach a passed deadline.
   */
  private readonly deadlines = new Map<string, VisitDeadline | null>();
  /** Each open visit's saved wait or retry schedule, as the store keeps it on the visit. */
  private readonly schedules = new Map<string, { dueAt: number; failedAttempts: number }>();
  readonly effects = new Map<string, MemoryEffect>();
  readonly messages: EnqueueMessage[] = [];
  readonly verdicts: SubmissionVerdict[] = [];
  /** Every progress report the executor sent, in order (already rate-limited by it). */
  readonly progressReports: NodeProgressReport[] = [];
  private readonly input: JsonValue;
  private readonly accepted: CheckpointAnswer | null;
  private readonly carried: Record<string, JsonValue>;
  private readonly agentEvents = new AgentEventQueue();

  constructor(options: MemoryRunOptions = {}) {
    this.runId = options.runId ?? "memory-run";
    this.input = options.input ?? null;
    this.accepted = options.accepted ?? null;
    this.carried = options.carriedOutputs ?? {};
  }

  /** A new port holding this run's saved state, as a fresh worker would see it after a crash. */
  reopen(): MemoryRunPort {
    const copy = new MemoryRunPort({
      runId: this.runId,
      input: this.input,
      ...(this.accepted ? { accepted: this.accepted } : {}),
      carriedOutputs: this.carried,
    });
    copy.status = this.status === "running" ? "starting" : this.status;
    // Loops, not push(...list): a spread as long as the run overflows the call stack.
    for (const v of this.visits) copy.visits.push({ ...v });
    for (const [id, e] of this.effects) copy.effects.set(id, { ...e });
    for (const m of this.messages) copy.messages.push(m);
    for (const [key, d] of this.deadlines) copy.deadlines.set(key, d);
    for (const [key, schedule] of this.schedules) copy.schedules.set(key, { ...schedule });
    return copy;
  }

  private stale<T>(): Transition<T> {
    return conflict({
      kind: "stale_fence",
      runId: this.runId,
      expectedGeneration: 1,
      actualGeneration: 2,
      status: this.status,
    });
  }

  private running(): boolean {
    return this.status === "running";
  }

  async readRun(): Promise<RunRecord | null> {
    return null;
  }

  async markRunning(): Promise<Transition<RunRecord>> {
    if (!isAllowedTransition(this.status, "running")) return this.stale();
    this.status = "running";
    return applied({} as RunRecord);
  }

  async loadSnapshot(): Promise<RunSnapshot> {
    return {
      runId: this.runId,
      input: this.input,
      visits: this.visits.map((v) => ({ ...v })),
      carriedOutputs: { ...this.carried },
      accepted: this.accepted,
      stepCount: this.visits.length,
    };
  }

  async startNodeVisit(req: StartNodeVisit): Promise<Transition<NodeVisitState>> {
    if (!this.running()) return this.stale();
    const existing = this.visits.find((v) => v.path === req.path && v.visit === req.visit);
    if (existing && existing.status !== "running") {
      const result =
        existing.status === "succeeded"
          ? { status: "succeeded" as const, output: existing.output ?? null, next: existing.nextPath }
          : {
              status: existing.status,
              error: existing.error ?? { code: "node_failed" as const, message: "" },
              ...(existing.nextPath === null ? {} : { next: existing.nextPath }),
              ...(existing.output === undefined ? {} : { output: existing.output }),
            };
      return adopted({
        status: "finished",
        path: req.path,
        visit: req.visit,
        attempt: existing.attempt,
        result,
      });
    }
    if (this.pauseRequested) {
      if (req.holdOnPause === true) return recoveryRequired(PAUSED_AT_NODE_BOUNDARY);
      return this.park(PAUSED_AT_NODE_BOUNDARY);
    }
    if (existing) {
      existing.attempt += 1;
      const deadline = this.deadlines.get(`${req.path}:${req.visit}`) ?? null;
      const schedule = this.schedules.get(`${req.path}:${req.visit}`);
      return applied({
        status: "running",
        path: req.path,
        visit: req.visit,
        attempt: existing.attempt,
        ...(deadline ? { deadline } : {}),
        ...(schedule ? { dueAt: schedule.dueAt } : {}),
        ...(schedule && schedule.failedAttempts > 0 ? { failedAttempts: schedule.failedAttempts } : {}),
      });
    }
    this.visits.push({
      path: req.path,
      visit: req.visit,
      nodeKind: req.nodeKind,
      attempt: 1,
      status: "running",
      nextPath: null,
    });
    const deadline =
      req.timeoutMs == null ? null : { timeoutMs: req.timeoutMs, at: Date.now() + req.timeoutMs };
    this.deadlines.set(`${req.path}:${req.visit}`, deadline);
    return applied({
      status: "running",
      path: req.path,
      visit: req.visit,
      attempt: 1,
      ...(deadline ? { deadline } : {}),
    });
  }

  async finishNodeVisit(req: FinishNodeVisit): Promise<Transition<NodeVisitState>> {
    if (!this.running()) return this.stale();
    const visit = this.visits.find((v) => v.path === req.path && v.visit === req.visit);
    if (!visit)
      return conflict({ kind: "visit_not_open", runId: this.runId, path: req.path, visit: req.visit });
    const { result } = req;
    visit.status = result.status;
    if (result.status === "succeeded") {
      visit.output = result.output;
      visit.nextPath = result.next;
    } else {
      visit.error = result.error;
      visit.nextPath = result.next ?? null;
      if (result.output !== undefined) visit.output = result.output;
    }
    return applied({ status: "finished", path: req.path, visit: req.visit, attempt: visit.attempt, result });
  }

  async advanceNodeVisit(req: AdvanceNodeVisit): Promise<Transition<NodeVisitAdvance>> {
    const finished = await this.finishNodeVisit(req.finish);
    if (finished.kind === "conflict" || finished.kind === "recoveryRequired") return finished;
    const advance = { finished: finished.value, started: await this.startNodeVisit(req.start) };
    return finished.kind === "applied" ? applied(advance) : adopted(advance);
  }

  async reserveEffect(req: ReserveEffect): Promise<Transition<EffectState>> {
    if (!this.running()) return this.stale();
    const request = effectRequestText(req);
    const existing = this.effects.get(req.effectId);
    if (existing) {
      if (existing.request !== request)
        return conflict({ kind: "request_mismatch", resource: "effect", id: req.effectId });
      if (existing.state.status === "reserved" && existing.mode === "manual") {
        return this.park(manualEffectUnsettled(req.effectType, req.effectId));
      }
      return adopted(existing.state);
    }
    const state: EffectState = { status: "reserved", effectId: req.effectId };
    this.effects.set(req.effectId, { visitKey: `${req.path}:${req.visit}`, request, mode: req.mode, state });
    return applied(state);
  }

  async settleEffect(req: SettleEffect): Promise<Transition<EffectState>> {
    if (!this.running()) return this.stale();
    const effect = this.effects.get(req.effectId);
    if (!effect) return conflict({ kind: "not_found", resource: "effect", id: req.effectId });
    if (effect.state.status === "settled") {
      // As in the store: settling again with the same result adopts, with another it conflicts.
      return canonicalJson(effect.state.result) === canonicalJson(req.result)
        ? adopted(effect.state)
        : conflict({
            kind: "state_mismatch",
            resource: "effect",
            id: req.effectId,
            expected: "reserved",
            actual: effect.state.result.ok ? "settled" : "failed",
          });
    }
    effect.state = { status: "settled", effectId: req.effectId, result: req.result };
    return applied(effect.state);
  }

  async enqueueMessage(req: EnqueueMessage): Promise<Transition<MessageRecord>> {
    if (!this.running()) return this.stale();
    const record: MessageRecord = {
      ...req,
      runId: this.runId,
      sessionId: null,
      status: "pending",
      createdAt: 0,
      deliveredAt: null,
    };
    if (this.messages.some((m) => m.messageId === req.messageId)) return adopted(record);
    this.messages.push(req);
    return applied(record);
  }

  async finishRun(ending: RunEnding): Promise<Transition<RunRecord>> {
    const target = ending.outcome === "completed" || ending.outcome === "waiting" ? "done" : "failed";
    // As in the store: a run that never started running may only fail (a refused command).
    if (!isAllowedTransition(this.status, target) || (this.status === "starting" && target !== "failed")) {
      return this.stale();
    }
    this.ending = ending;
    this.status = target;
    return applied({} as RunRecord);
  }

  async scheduleVisit(reason: RecoveryReason): Promise<Transition<RunRecord>> {
    if (!this.running()) return this.stale();
    // As in the store: only a wait or a retry has a schedule to save.
    if (!isClockReason(reason)) {
      return conflict({
        kind: "state_mismatch",
        resource: "run",
        id: this.runId,
        expected: "a wait or retry reason",
        actual: reason.code,
      });
    }
    this.schedule(reason);
    return applied({} as RunRecord);
  }

  /** The run's budget and its saved spend, as a test sets them; a check adds what it reports pending. */
  budget: Budget | null = null;
  spend: BudgetSpend = NO_SPEND;
  /** Every budget check, in order. */
  readonly budgetChecks: WorkerParams<"budget.check">[] = [];

  async checkBudget(
    req: WorkerParams<"budget.check">,
  ): Promise<Transition<{ budget: Budget | null; spend: BudgetSpend; reached: BudgetLimit | null }>> {
    this.budgetChecks.push(req);
    if (this.status === "parked" && this.parkedReason?.code === "budget_exceeded") {
      return recoveryRequired(this.parkedReason);
    }
    if (!this.running()) return this.stale();
    const verdict = budgetVerdict(this.budget, this.spend, req);
    if (verdict.kind === "answer") return applied(verdict.answer);
    return this.park(verdict.reason);
  }

  async parkRun(reason: RecoveryReason): Promise<Transition<RunRecord>> {
    if (!this.running()) return this.stale();
    if (isClockReason(reason)) this.schedule(reason);
    this.status = "parked";
    this.parkedReason = reason;
    return applied({} as RunRecord);
  }

  /** The definition a resume that accepted changes switched to; null until then. */
  redefined: RedefineRun | null = null;

  async redefineRun(req: RedefineRun): Promise<Transition<RunRecord>> {
    if (!this.running()) return this.stale();
    this.redefined = req;
    return applied({} as RunRecord);
  }

  /** As the store's clock park: save the visit's due time; a retry drops its failed effects. */
  private schedule(reason: ClockReason): void {
    const key = `${reason.path}:${reason.visit}`;
    const before = this.schedules.get(key)?.failedAttempts ?? 0;
    if (reason.code === "waiting") {
      this.schedules.set(key, { dueAt: reason.until, failedAttempts: before });
      return;
    }
    this.schedules.set(key, { dueAt: reason.at, failedAttempts: reason.attempt - 1 });
    const deadline = this.deadlines.get(key);
    if (deadline)
      this.deadlines.set(key, { timeoutMs: deadline.timeoutMs, at: reason.at + deadline.timeoutMs });
    for (const [id, effect] of this.effects) {
      if (effect.visitKey === key && effect.state.status === "settled" && !effect.state.result.ok) {
        this.effects.delete(id);
      }
    }
  }

  private park<T>(reason: RecoveryReason): Transition<T> {
    this.status = "parked";
    this.parkedReason = reason;
    return recoveryRequired(reason);
  }

  /** The host cancelled the run: every later call finds the claim gone. */
  cancel(): void {
    this.status = "cancelled";
  }

  /** Deliver a model submission for the open agent visit. */
  submit(output: unknown): void {
    this.agentEvents.push({ type: "submission", output, respond: (verdict) => this.verdicts.push(verdict) });
  }

  /** The step's turn ended without a submission: by the model (default), lost, or at a provider error. */
  endTurn(ending: AgentTurnEnding = "completed"): void {
    this.agentEvents.push({ type: "turn_ended", ending });
  }

  /** The host saw the step's turn reach the run's budget (`spend` should say so by now). */
  budgetReached(): void {
    this.agentEvents.push({ type: "budget_exceeded" });
  }

  nextAgentEvent(_visit: { path: string; visit: number }, signal: AbortSignal): Promise<AgentEvent> {
    return this.agentEvents.next(signal);
  }

  reportProgress(report: NodeProgressReport): void {
    this.progressReports.push(report);
  }
}
