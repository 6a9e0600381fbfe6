import {
  advanceNodeVisitSchema,
  endTurnSchema,
  enqueueMessageSchema,
  type Fence,
  fenceSchema,
  finishNodeVisitSchema,
  type MessageRecord,
  opaqueIdSchema,
  prepareContinuationSchema,
  prepareRestartSchema,
  recoveryReasonSchema,
  reserveEffectSchema,
  reservePreparedRunSchema,
  resolveManualEffectSchema,
  runEndingSchema,
  runIdSchema,
  settleEffectSchema,
  startNodeVisitSchema,
  startTurnSchema,
  workerExitSchema,
} from "@piw/protocol";
import { z } from "zod";
import { StoreContext } from "./context.js";
import { resolveManualEffect } from "./effect-resolution.js";
import { StoreError } from "./errors.js";
import { readRunHistory } from "./history-readers.js";
import { reserveEffect, settleEffect } from "./effects.js";
import { advanceNodeVisit, finishNodeVisit, startNodeVisit } from "./node-visits.js";
import { openDatabase, type SynchronousMode } from "./open-database.js";
import {
  cancelMessage,
  claimMessages,
  createTerminalMessages,
  enqueueMessage,
  listRunsNeedingPresentation,
  listSessionMessages,
  markMessageDelivered,
} from "./outbox.js";
import * as readers from "./readers.js";
import { cancelRun, claimRun, finishRun, markRunning } from "./run-lifecycle.js";
import { prepareContinuation, prepareRestart } from "./run-lineage.js";
import { parkRun, recoverExpiredStarting, requestPause } from "./run-recovery.js";
import { reservePreparedRun } from "./run-reservation.js";
import { readRunSnapshot } from "./run-snapshot.js";
import { endTurn, latestWorkflowTurn, openSessionTurn, settleSessionTurns, startTurn } from "./turns.js";
import { listOpenLaunches, recordWorkerExit, recordWorkerLaunch } from "./worker-launches.js";

export interface OpenStoreOptions {
  stateDir: string;
  synchronous?: SynchronousMode;
  busyTimeoutMs?: number;
  /** Largest blob accepted (default 1 MiB). */
  maxBlobBytes?: number;
  /** Milliseconds since the epoch; injectable so tests control leases. */
  now?: () => number;
}

export const DEFAULT_MAX_BLOB_BYTES = 1024 * 1024;

/** Validate an operation's input at the store boundary: a bad record is a typed error and changes nothing. */
function parse<T extends z.ZodType>(schema: T, value: unknown, what: string): z.infer<T> {
  const result = schema.safeParse(value);
  if (!result.success) {
    const issue = result.error.issues[0];
    const where = issue?.path.length ? ` at ${issue.path.join(".")}` : "";
    throw new StoreError("invalid_record", `Invalid ${what}${where}: ${issue?.message ?? "malformed"}.`);
  }
  return result.data;
}

const runRef = z.object({ runId: runIdSchema });
const claimSchema = z.object({
  runId: runIdSchema,
  claimToken: opaqueIdSchema,
  leaseMs: z
    .number()
    .int()
    .min(1)
    .max(24 * 3600 * 1000),
  expectedRevision: z.number().int().min(0).optional(),
  resume: z.literal(true).optional(),
});
const cancelSchema = z.object({ runId: runIdSchema, expectedRevision: z.number().int().min(0).optional() });
const sessionRef = z.object({ sessionId: opaqueIdSchema });
const messageRef = z.object({ messageId: opaqueIdSchema });
const claimMessagesSchema = z.object({
  sessionId: opaqueIdSchema,
  claimToken: opaqueIdSchema,
  leaseMs: z
    .number()
    .int()
    .min(1)
    .max(3600 * 1000),
  limit: z.number().int().min(1).max(500).optional(),
});
const launchSchema = z.object({
  launchId: opaqueIdSchema,
  commandType: z.enum(["start", "resume", "continue", "restart"]),
  pid: z.number().int().nullable(),
});
const exitSchema = z.object({ launchId: opaqueIdSchema, exit: workerExitSchema });

/**
 * The only interface for durable change (seed 000). Every method is one IMMEDIATE transaction that
 * returns a typed Transition; readers return typed values. Nothing here leaks a raw SQLite error.
 */
export class RunStore {
  private readonly ctx: StoreContext;
  private closed = false;

  private constructor(
    ctx: StoreContext,
    readonly file: string,
  ) {
    this.ctx = ctx;
  }

  static open(options: OpenStoreOptions): RunStore {
    const { db, file } = openDatabase(options);
    const ctx = new StoreContext(db, options.now ?? Date.now, {
      maxBlobBytes: options.maxBlobBytes ?? DEFAULT_MAX_BLOB_BYTES,
    });
    return new RunStore(ctx, file);
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

  // Run lifecycle (seed 003 transition table).
  reservePreparedRun(req: unknown) {
    return reservePreparedRun(this.use(), parse(reservePreparedRunSchema, req, "run reservation"));
  }
  claimRun(req: unknown) {
    return claimRun(this.use(), parse(claimSchema, req, "claim"));
  }
  markRunning(fence: Fence) {
    return markRunning(this.use(), parse(fenceSchema, fence, "fence"));
  }
  finishRun(fence: Fence, ending: unknown) {
    return finishRun(
      this.use(),
      parse(fenceSchema, fence, "fence"),
      parse(runEndingSchema, ending, "run ending"),
    );
  }
  cancelRun(req: unknown) {
    return cancelRun(this.use(), parse(cancelSchema, req, "cancel request"));
  }
  parkRun(fence: Fence, reason: unknown) {
    return parkRun(
      this.use(),
      parse(fenceSchema, fence, "fence"),
      parse(recoveryReasonSchema, reason, "recovery reason"),
    );
  }
  /** A person's word on an unsettled manual effect of a parked run; the run stays parked. */
  resolveManualEffect(req: unknown) {
    return resolveManualEffect(this.use(), parse(resolveManualEffectSchema, req, "effect resolution"));
  }
  requestPause(req: unknown) {
    return requestPause(this.use(), parse(runRef, req, "pause request"));
  }
  recoverExpiredStarting(req: unknown) {
    return recoverExpiredStarting(this.use(), parse(runRef, req, "recovery request"));
  }
  prepareContinuation(req: unknown) {
    return prepareContinuation(this.use(), parse(prepareContinuationSchema, req, "continuation"));
  }
  prepareRestart(req: unknown) {
    return prepareRestart(this.use(), parse(prepareRestartSchema, req, "restart"));
  }

  // Node visits and managed effects (fenced by the worker's claim).
  startNodeVisit(fence: Fence, req: unknown) {
    return startNodeVisit(
      this.use(),
      parse(fenceSchema, fence, "fence"),
      parse(startNodeVisitSchema, req, "node visit"),
    );
  }
  finishNodeVisit(fence: Fence, req: unknown) {
    return finishNodeVisit(
      this.use(),
      parse(fenceSchema, fence, "fence"),
      parse(finishNodeVisitSchema, req, "node result"),
    );
  }
  /** `finishNodeVisit` and the next `startNodeVisit` in one transaction (one commit). */
  advanceNodeVisit(fence: Fence, req: unknown) {
    return advanceNodeVisit(
      this.use(),
      parse(fenceSchema, fence, "fence"),
      parse(advanceNodeVisitSchema, req, "node advance"),
    );
  }
  reserveEffect(fence: Fence, req: unknown) {
    return reserveEffect(
      this.use(),
      parse(fenceSchema, fence, "fence"),
      parse(reserveEffectSchema, req, "effect"),
    );
  }
  settleEffect(fence: Fence, req: unknown) {
    return settleEffect(
      this.use(),
      parse(fenceSchema, fence, "fence"),
      parse(settleEffectSchema, req, "effect result"),
    );
  }

  // Workflow turns (seed 000).
  startTurn(req: unknown) {
    return startTurn(this.use(), parse(startTurnSchema, req, "turn start"));
  }
  endTurn(req: unknown) {
    return endTurn(this.use(), parse(endTurnSchema, req, "turn end"));
  }
  settleSessionTurns(req: unknown) {
    return settleSessionTurns(this.use(), parse(sessionRef, req, "session"));
  }
  /** The session's open workflow turn, if any: the only turn a submission may come from. */
  openSessionTurn(sessionId: string) {
    return openSessionTurn(this.use(), parse(sessionRef, { sessionId }, "session").sessionId);
  }
  /** The session's latest workflow-owned turn, open or ended: the step a late submit was meant for. */
  latestWorkflowTurn(sessionId: string) {
    return latestWorkflowTurn(this.use(), parse(sessionRef, { sessionId }, "session").sessionId);
  }

  // Outbox.
  enqueueMessage(fence: Fence, req: unknown) {
    return enqueueMessage(
      this.use(),
      parse(fenceSchema, fence, "fence"),
      parse(enqueueMessageSchema, req, "message"),
    );
  }
  claimMessages(req: unknown) {
    return claimMessages(this.use(), parse(claimMessagesSchema, req, "message claim"));
  }
  markMessageDelivered(req: unknown) {
    return markMessageDelivered(this.use(), parse(messageRef, req, "message"));
  }
  cancelMessage(req: unknown) {
    return cancelMessage(this.use(), parse(messageRef, req, "message"));
  }
  createTerminalMessages(req: unknown) {
    return createTerminalMessages(this.use(), parse(runRef, req, "run"));
  }
  listRunsNeedingPresentation(): string[] {
    return listRunsNeedingPresentation(this.use());
  }
  listSessionMessages(sessionId: string, statuses?: MessageRecord["status"][]): MessageRecord[] {
    return listSessionMessages(this.use(), parse(opaqueIdSchema, sessionId, "session ID"), statuses);
  }

  // Workers.
  recordWorkerLaunch(fence: Fence, req: unknown) {
    return recordWorkerLaunch(
      this.use(),
      parse(fenceSchema, fence, "fence"),
      parse(launchSchema, req, "launch"),
    );
  }
  recordWorkerExit(req: unknown) {
    return recordWorkerExit(this.use(), parse(exitSchema, req, "worker exit"));
  }
  listOpenLaunches() {
    return listOpenLaunches(this.use());
  }

  // Typed readers: the only way to read run columns.
  getRun(runId: string) {
    return readers.getRun(this.use(), runId);
  }
  listRuns(query?: readers.ListRunsQuery) {
    return readers.listRuns(this.use(), query);
  }
  findSessionReservation(sessionId: string) {
    return readers.findSessionReservation(this.use(), sessionId);
  }
  readRunInput(runId: string) {
    return readers.readRunInput(this.use(), runId);
  }
  readRunFinalOutput(runId: string) {
    return readers.readRunFinalOutput(this.use(), runId);
  }
  readRunError(runId: string) {
    return readers.readRunError(this.use(), runId);
  }
  readPresentationInstructions(runId: string) {
    return readers.readPresentationInstructions(this.use(), runId);
  }
  readTerminalFacts(runId: string) {
    return readers.readTerminalFacts(this.use(), runId);
  }
  readAnswerCheck(runId: string) {
    return readers.readAnswerCheck(this.use(), runId);
  }
  readRunManifest(runId: string) {
    return readers.readRunManifest(this.use(), runId);
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
  readRunSnapshot(runId: string) {
    return readRunSnapshot(this.use(), runId);
  }
  listRunSteps(runId: string) {
    return readers.listRunSteps(this.use(), runId);
  }
  listRunEffects(runId: string) {
    return readers.listRunEffects(this.use(), runId);
  }
  listRunEvents(runId: string, afterSeq?: number, limit?: number) {
    return readers.listRunEvents(this.use(), runId, afterSeq, limit);
  }
  /** Outputs, errors, effects, messages and turns of a run, for a viewer's inspector. */
  readRunHistory(runId: string) {
    return readRunHistory(this.use(), runId);
  }
}

/** What components that only read may hold (pi-mono's ReadonlySessionManager pattern). */
export type RunReader = Pick<
  RunStore,
  | "getRun"
  | "listRuns"
  | "findSessionReservation"
  | "readRunInput"
  | "readRunFinalOutput"
  | "readRunError"
  | "readPresentationInstructions"
  | "readTerminalFacts"
  | "readAnswerCheck"
  | "listRunSteps"
  | "listRunEffects"
  | "listRunEvents"
  | "readRunManifest"
  | "listOpenTurns"
  | "latestSettledTurn"
  | "countRunsByStatus"
>;
