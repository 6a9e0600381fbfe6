import type {
  AdvanceNodeVisit,
  Answerer,
  EndTurn,
  EnqueueMessage,
  Fence,
  FinishNodeVisit,
  MessageRecord,
  PrepareContinuation,
  PrepareRestart,
  RecoveryReason,
  RedefineRun,
  ReserveEffect,
  ReservePreparedRun,
  ResolveManualEffect,
  RunEnding,
  RunCommandType,
  RunStatus,
  NodeProgressReport,
  SettleEffect,
  StartNodeVisit,
  StartTurn,
  Budget,
  TurnUsage,
  WorkerExit,
  WorkerParams,
} from "@piw/protocol";
import { checkBudget, raiseBudget, readBudgetState, recordTurnUsage } from "./budget-spend.js";
import { listDueRuns, nextWakeAt } from "./clock.js";
import { type GroupOutcome, StoreContext } from "./context.js";
import { markLaunchesAlive } from "./deadline-clock.js";
import { resolveManualEffect } from "./effect-resolution.js";
import { StoreError } from "./errors.js";
import { readRunHistory } from "./history-readers.js";
import { reserveEffect, settleEffect } from "./effects.js";
import { listNodeProgress, readRunProgress, saveNodeProgress } from "./node-progress.js";
import { advanceNodeVisit, finishNodeVisit, startNodeVisit } from "./node-visits.js";
import { openDatabase, type SynchronousMode } from "./open-database.js";
import { DEFAULT_MAX_BLOB_BYTES, type OpenStoreOptions, type TunedStoreOptions } from "./store-options.js";
import {
  cancelMessage,
  claimMessages,
  createTerminalMessages,
  enqueueMessage,
  listRunsNeedingPresentation,
  listSessionMessages,
  markMessageDelivered,
  releaseMessage,
} from "./outbox.js";
import * as readers from "./readers.js";
import { eachRun } from "./run-pages.js";
import * as terminalReaders from "./terminal-readers.js";
import {
  cancelRun,
  type ClaimRequest,
  checkClaim,
  claimRun,
  finishRun,
  markRunning,
  redefineRun,
} from "./run-lifecycle.js";
import { prepareContinuation, prepareRestart } from "./run-lineage.js";
import { parkRun, recoverExpiredStarting, requestPause, scheduleOpenVisit } from "./run-recovery.js";
import { reservePreparedRun } from "./run-reservation.js";
import { ScheduleStore } from "./schedule-store.js";
import { readRunSnapshot } from "./run-snapshot.js";
import { endTurn, latestWorkflowTurn, openSessionTurn, settleSessionTurns, startTurn } from "./turns.js";
import { listOpenLaunches, recordWorkerExit, recordWorkerLaunch } from "./worker-launches.js";

// Set by RunStore's static block, which alone may call its constructor: the tuned open of the testing entry.
let openTuned: ((options: TunedStoreOptions) => RunStore) | undefined;

type RunRef = { runId: string };
type SessionRef = { sessionId: string };
type MessageRef = { messageId: string };

/**
 * The only interface for durable change (the one-writer rule). Every method is one IMMEDIATE transaction that
 * returns a typed Transition; readers return typed values. Nothing here leaks a raw SQLite error.
 */
export class RunStore {
  private readonly ctx: StoreContext;
  private closed = false;
  /** Schedules: their transitions and readers. */
  readonly schedules = new ScheduleStore(() => this.use());

  private constructor(
    ctx: StoreContext,
    readonly file: string,
  ) {
    this.ctx = ctx;
  }

  static {
    openTuned = (options) => {
      const { db, file } = openDatabase(options);
      const ctx = new StoreContext(db, options.now ?? Date.now, {
        maxBlobBytes: options.maxBlobBytes ?? DEFAULT_MAX_BLOB_BYTES,
      });
      return new RunStore(ctx, file);
    };
  }

  /** Opens (creating if needed) the state database of `stateDir`, synchronous mode FULL. */
  static open(options: OpenStoreOptions): RunStore {
    return openTunedStore({ ...options, synchronous: "FULL" });
  }

  /** The connection's durability settings, for diagnostics and tests. */
  settings(): { journalMode: string; synchronous: SynchronousMode; foreignKeys: boolean } {
    const db = this.use().db;
    const sync = db.pragma("synchronous", { simple: true }) as number;
    return {
      journalMode: String(db.pragma("journal_mode", { simple: true })),
      synchronous: sync === 2 ? "FULL" : "NORMAL",
      foreignKeys: db.pragma("foreign_keys", { simple: true }) === 1,
    };
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.ctx.db.close();
  }

  private use(): StoreContext {
    if (this.closed) throw new StoreError("store_closed", "The state store is closed.");
    return this.ctx;
  }

  /**
   * Group commit: apply several requests (each a call of this store's methods) in one transaction
   * with one commit, each in its own savepoint, and return each one's own outcome. A request that
   * throws changes nothing and fails alone; if the commit itself fails, every request fails and
   * nothing is saved. See docs/maintainers/state.md, "Group commit".
   */
  commitGroup<T>(requests: ReadonlyArray<() => T>): GroupOutcome<T>[] {
    return this.use().group(requests);
  }

  // Run lifecycle (the status-table rule). Requests arrive typed and already validated: the
  // host's RPC layer parses what a client or worker sent, and in-process callers build them typed.
  reservePreparedRun(req: ReservePreparedRun) {
    return reservePreparedRun(this.use(), req);
  }
  claimRun(req: ClaimRequest) {
    return claimRun(this.use(), req);
  }
  /** Why `claimRun` would refuse this claim now (null: it would apply); changes nothing. */
  checkClaim(req: Omit<ClaimRequest, "claimToken" | "leaseMs">) {
    return checkClaim(this.use(), req);
  }
  markRunning(fence: Fence) {
    return markRunning(this.use(), fence);
  }
  finishRun(fence: Fence, ending: RunEnding) {
    return finishRun(this.use(), fence, ending);
  }
  cancelRun(req: { runId: string; expectedRevision?: number; by?: Answerer }) {
    return cancelRun(this.use(), req);
  }
  /** An open visit's wait or retry schedule, saved while the run goes on (a parallel branch). */
  scheduleVisit(fence: Fence, reason: RecoveryReason) {
    return scheduleOpenVisit(this.use(), fence, reason);
  }
  parkRun(fence: Fence, reason: RecoveryReason) {
    return parkRun(this.use(), fence, reason);
  }
  /** An agent step's budget check; parks the run (`budget_exceeded`) at a limit. */
  checkBudget(fence: Fence, req: WorkerParams<"budget.check">) {
    return checkBudget(this.use(), fence, req);
  }
  /** A resume's `--budget`, saved over the run's limits before it is claimed. */
  raiseBudget(req: { runId: string; budget: Budget }) {
    return raiseBudget(this.use(), req);
  }
  redefineRun(fence: Fence, req: RedefineRun) {
    return redefineRun(this.use(), fence, req);
  }
  /** A person's word on an unsettled manual effect of a parked run; the run stays parked. */
  resolveManualEffect(req: ResolveManualEffect) {
    return resolveManualEffect(this.use(), req);
  }
  requestPause(req: RunRef) {
    return requestPause(this.use(), req);
  }
  recoverExpiredStarting(req: RunRef) {
    return recoverExpiredStarting(this.use(), req);
  }
  prepareContinuation(req: PrepareContinuation) {
    return prepareContinuation(this.use(), req);
  }
  prepareRestart(req: PrepareRestart) {
    return prepareRestart(this.use(), req);
  }

  // Node visits and managed effects (fenced by the worker's claim).
  startNodeVisit(fence: Fence, req: StartNodeVisit) {
    return startNodeVisit(this.use(), fence, req);
  }
  finishNodeVisit(fence: Fence, req: FinishNodeVisit) {
    return finishNodeVisit(this.use(), fence, req);
  }
  /** `finishNodeVisit` and the next `startNodeVisit` in one transaction (one commit). */
  advanceNodeVisit(fence: Fence, req: AdvanceNodeVisit) {
    return advanceNodeVisit(this.use(), fence, req);
  }
  reserveEffect(fence: Fence, req: ReserveEffect) {
    return reserveEffect(this.use(), fence, req);
  }
  settleEffect(fence: Fence, req: SettleEffect) {
    return settleEffect(this.use(), fence, req);
  }
  /** The latest progress of a running visit's attempt; not a run change (no revision). */
  saveNodeProgress(fence: Fence, req: NodeProgressReport) {
    return saveNodeProgress(this.use(), fence, req);
  }

  // Workflow turns (the turn-ownership rule).
  startTurn(req: StartTurn) {
    return startTurn(this.use(), req);
  }
  endTurn(req: EndTurn) {
    return endTurn(this.use(), req);
  }
  /** A Pi session's usage of its open workflow turn so far, and its run's budget state. */
  recordTurnUsage(req: TurnUsage) {
    return recordTurnUsage(this.use(), req);
  }
  settleSessionTurns(req: SessionRef) {
    return settleSessionTurns(this.use(), req);
  }
  /** The session's open workflow turn, if any: the only turn a submission may come from. */
  openSessionTurn(sessionId: string) {
    return openSessionTurn(this.use(), sessionId);
  }
  /** The session's latest workflow-owned turn, open or ended: the step a late submit was meant for. */
  latestWorkflowTurn(sessionId: string) {
    return latestWorkflowTurn(this.use(), sessionId);
  }

  // Outbox.
  enqueueMessage(fence: Fence, req: EnqueueMessage) {
    return enqueueMessage(this.use(), fence, req);
  }
  claimMessages(req: { sessionId: string; claimToken: string; leaseMs: number; limit?: number }) {
    return claimMessages(this.use(), req);
  }
  markMessageDelivered(req: MessageRef) {
    return markMessageDelivered(this.use(), req);
  }
  releaseMessage(req: MessageRef & { sessionId: string }) {
    return releaseMessage(this.use(), req);
  }
  cancelMessage(req: MessageRef) {
    return cancelMessage(this.use(), req);
  }
  createTerminalMessages(req: RunRef) {
    return createTerminalMessages(this.use(), req);
  }
  listRunsNeedingPresentation(): string[] {
    return listRunsNeedingPresentation(this.use());
  }
  listSessionMessages(sessionId: string, statuses?: MessageRecord["status"][]): MessageRecord[] {
    return listSessionMessages(this.use(), sessionId, statuses);
  }

  // Workers.
  recordWorkerLaunch(
    fence: Fence,
    req: { launchId: string; commandType: RunCommandType; pid: number | null },
  ) {
    return recordWorkerLaunch(this.use(), fence, req);
  }
  recordWorkerExit(req: { launchId: string; exit: WorkerExit }) {
    return recordWorkerExit(this.use(), req);
  }
  listOpenLaunches() {
    return listOpenLaunches(this.use());
  }
  /** The host's heartbeat for its live workers: bounds the deadline time lost with a dead host. */
  markLaunchesAlive(launchIds: readonly string[]): void {
    markLaunchesAlive(this.use(), launchIds);
  }

  // Typed readers: the only way to read run columns.
  getRun(runId: string) {
    return readers.getRun(this.use(), runId);
  }
  listRuns(query?: readers.ListRunsQuery) {
    return readers.listRuns(this.use(), query);
  }
  /** Every run in these statuses, oldest first, read a page at a time: no fixed cap skips any. */
  eachRun<S extends RunStatus>(statuses: readonly S[], pageSize?: number) {
    return eachRun(this.use(), statuses, pageSize);
  }
  findSessionReservation(sessionId: string) {
    return readers.findSessionReservation(this.use(), sessionId);
  }
  findContinuation(runId: string) {
    return readers.findContinuation(this.use(), runId);
  }
  readRunInput(runId: string) {
    return terminalReaders.readRunInput(this.use(), runId);
  }
  /** Private: for the worker that runs the run; never part of RunReader, so no view can read it. */
  readRunEnv(runId: string) {
    return terminalReaders.readRunEnv(this.use(), runId);
  }
  readRunFinalOutput(runId: string) {
    return terminalReaders.readRunFinalOutput(this.use(), runId);
  }
  readRunError(runId: string) {
    return terminalReaders.readRunError(this.use(), runId);
  }
  readPresentationInstructions(runId: string) {
    return terminalReaders.readPresentationInstructions(this.use(), runId);
  }
  readTerminalFacts(runId: string) {
    return terminalReaders.readTerminalFacts(this.use(), runId);
  }
  readAnswerCheck(runId: string) {
    return terminalReaders.readAnswerCheck(this.use(), runId);
  }
  readRunManifest(runId: string) {
    return readers.readRunManifest(this.use(), runId);
  }
  listTurnEntries(runId: string, path: string) {
    return readers.listTurnEntries(this.use(), runId, path);
  }
  listOpenTurns(runId: string) {
    return readers.listOpenTurns(this.use(), runId);
  }
  latestSettledTurn(runId: string) {
    return readers.latestSettledTurn(this.use(), runId);
  }
  countRunsByStatus() {
    return readers.countRunsByStatus(this.use());
  }
  /** The durable clock: the earliest wake-up time after `after` (exclusive) of an unpaused parked run. */
  nextWakeAt(after?: number) {
    return nextWakeAt(this.use(), after);
  }
  /** The runs whose wait or retry pause is due by `now`, earliest first. */
  listDueRuns(now: number, limit = 100) {
    return listDueRuns(this.use(), now, limit);
  }
  readRunSnapshot(runId: string) {
    return readRunSnapshot(this.use(), runId);
  }
  listRunSteps(runId: string) {
    return readers.listRunSteps(this.use(), runId);
  }
  /** The saved progress of the run's open visits (the latest attempt that reported). */
  listNodeProgress(runId: string) {
    return listNodeProgress(this.use(), runId);
  }
  /** The run's latest run-wide progress (`scope: "run"`), kept after its visit ended; null when none. */
  readRunProgress(runId: string) {
    return readRunProgress(this.use(), runId);
  }
  listRunEffects(runId: string) {
    return readers.listRunEffects(this.use(), runId);
  }
  /** How long each settled `effectType` effect's saved list is (a map visit's `map.items`, say). */
  listEffectListLengths(runId: string, effectType: string) {
    return readers.listEffectListLengths(this.use(), runId, effectType);
  }
  listRunWorkspaces(runId: string, effectType: string) {
    return readers.listRunWorkspaces(this.use(), runId, effectType);
  }
  listRunEvents(runId: string, afterSeq?: number, limit?: number) {
    return readers.listRunEvents(this.use(), runId, afterSeq, limit);
  }
  /** A run's budget and what it has spent so far (saved facts only); null for no such run. */
  readBudgetState(runId: string) {
    return this.use().read(() => readBudgetState(this.use(), runId));
  }
  /** Outputs, errors, effects, messages and turns of a run, for a viewer's inspector. */
  readRunHistory(runId: string) {
    return readRunHistory(this.use(), runId);
  }
}

/** `RunStore.open` with SQLite's synchronous mode: for benches and tests only, through `@piw/store/testing`. */
export function openTunedStore(options: TunedStoreOptions): RunStore {
  if (openTuned === undefined) throw new Error("RunStore is not initialised");
  return openTuned(options);
}
