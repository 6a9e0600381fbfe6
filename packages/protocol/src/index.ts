export type { AgentProgress } from "./agent-progress.js";
export { AGENT_ACTIVITY_MAX, progressText } from "./agent-progress.js";
export type { AgentSessionReport, TranscriptEntry } from "./agent-session.js";
export { piContentText, piMessageTranscript } from "./pi-message-transcript.js";
export { AGENT_SESSION_EFFECT, agentSessionReportSchema } from "./agent-session.js";
export type { AnswerCheck, AnsweredBy, Answerer } from "./answer-check.js";
export {
  ANSWER_SCHEMA_MAX_BYTES,
  answerCheckSchema,
  answeredBySchema,
  checkAnswer,
  mayAnswer,
} from "./answer-check.js";
export { canonicalJson } from "./canonical-json.js";
export { effectRequestText, manualEffectUnsettled, PAUSED_AT_NODE_BOUNDARY } from "./effect-rules.js";
export type {
  ClientMethod,
  ClientParams,
  ClientResult,
  KeyedMethod,
} from "./client-methods.js";
export { clientMethods, clientPushes, lostReplyPolicy } from "./client-methods.js";
export { lazyTable } from "./lazy-table.js";
export type { EffectState, NodeVisitState, RunSnapshot, SavedVisit } from "./execution.js";
export { frameBatch } from "./frame-batch.js";
export { inspectFrame, MAX_FRAME_BYTES, PROTOCOL_VERSION } from "./frame-shape.js";
export { MAX_FRAME_DEPTH } from "./framing.js";
export {
  quickHelloResult,
  quickReservedRun,
  quickRunSummaries,
  quickSubscriptionId,
} from "./run-summary-check.js";
export { quickRunView } from "./run-view-check.js";
export { isLaterVisit, PASSED_VISITS_MAX, type VisitMark } from "./passed-visits.js";
export { quickPreparedLaunch } from "./preflight-check.js";
export { branchState, endedBranches, groupState, joinEnds } from "./branch-state.js";
export type { GraphManifest, JoinPolicy, ManifestFork, ManifestTarget } from "./graph-manifest.js";
export { graphManifestSchema } from "./graph-manifest.js";
export type { SavedMapList } from "./map-manifest.js";
export { instantiateMapBranches, MAP_ITEMS_EFFECT, MAP_LIST_ERROR_CODES } from "./map-manifest.js";
export { WORKSPACE_EFFECT } from "./workspace-view.js";
export type { MapInstance } from "./map-paths.js";
export { concreteOf, MAP_ITEM_SEGMENT, templateOf } from "./map-paths.js";
export type { JsonValue, RequestKey } from "./ids.js";
export {
  jsonValueSchema,
  newRunId,
  nodePathSchema,
  runIdSchema,
} from "./ids.js";
export { isReminderMessageId, reminderKind, runMessageId, visitMessageId } from "./message-ids.js";
export type { AdvanceNodeVisit, NodeVisitAdvance } from "./node-advance.js";
export { advanceNodeVisitSchema } from "./node-advance.js";
export type {
  PreflightLaunch,
  PreflightRefusal,
  PreflightReply,
  PreflightRequest,
  PreflightSource,
  WorkflowDescription,
} from "./preflight.js";
export {
  PREFLIGHT_MAX_PROBLEMS,
  PREFLIGHT_MAX_SOURCES,
  PREFLIGHT_MAX_TEXT,
  preflightReplySchema,
  preflightRequestSchema,
  reusablePreflightSources,
} from "./preflight.js";
export type { PushArgs, PushData, PushHandlers, PushName } from "./push-table.js";
export { dispatchPushes } from "./push-table.js";
export type { Handlers, MethodTable } from "./rpc-peer.js";
export { RpcError, RpcPeer } from "./rpc-peer.js";
export type { CheckpointAnswer, RunCommand, RunCommandType } from "./run-command.js";
export type {
  HistoryEffect,
  HistoryEvent,
  HistoryMessage,
  HistoryStep,
  HistoryTurn,
  RunHistory,
} from "./run-history.js";
export { historyEventSchema } from "./run-history.js";
export type { ConversationEntry, ConversationVisit, StepConversation } from "./step-conversation.js";
export { CONVERSATION_RESULT_MAX, CONVERSATION_TEXT_MAX } from "./step-conversation.js";
export type { AgentLive, LiveTranscriptSnapshot } from "./live-transcript.js";
export { LIVE_CHARS_MAX, LIVE_ENTRIES_MAX, LiveTranscript } from "./live-transcript.js";
export type {
  EffectResult,
  EnqueueMessage,
  Fence,
  FinishNodeVisit,
  MessageKind,
  MessageRecord,
  NodeKind,
  NodeVisitResult,
  PrepareContinuation,
  PrepareRestart,
  ReserveEffect,
  RedefineRun,
  ReservePreparedRun,
  ResolveManualEffect,
  RunEnding,
  SettleEffect,
  SourceIdentity,
  StartNodeVisit,
  ModelNotices,
  TerminalFact,
  TerminalFacts,
  VisitDeadline,
  WorkerExit,
  WorkerExitDecision,
} from "./run-records.js";
export {
  enqueueMessageSchema,
  fenceSchema,
  finishNodeVisitSchema,
  messageKindSchema,
  MAX_NODE_TIMEOUT_MS,
  nodeKindSchema,
  prepareContinuationSchema,
  prepareRestartSchema,
  reserveEffectSchema,
  reservePreparedRunSchema,
  resolveManualEffectSchema,
  runEndingSchema,
  settleEffectSchema,
  startNodeVisitSchema,
} from "./run-records.js";
export type {
  EndTurn,
  StartTurn,
  SubmissionResult,
  TurnEntries,
  TurnOwnership,
  TurnRecord,
  TurnUsage,
} from "./turn-records.js";
export { endTurnSchema, startTurnSchema } from "./turn-records.js";
export type { RunEnv } from "./run-env-capture.js";
export { captureRunEnv, RUN_ENV_MAX_BYTES } from "./run-env-capture.js";
export { runEnvSchema } from "./run-env.js";
export type { EndedRunRecord, RunRecord, RunRecordOf } from "./run-record.js";
export { hasRunStatus, isEndedRun, runOutcome } from "./run-record.js";
export type { RunOrigin } from "./run-status.js";
export { runStatusSchema } from "./run-status.js";
export type { RunStatus, TerminalOutcome } from "./status-sets.js";
export {
  ACTIVE_STATUSES,
  isActiveStatus,
  isAllowedTransition,
  isTerminalStatus,
  LIVE_STATUSES,
  RUN_TRANSITIONS,
  stoppedVisitState,
} from "./status-sets.js";
export type {
  CheckpointView,
  CurrentWork,
  NodeProgress,
  NodeView,
  PassedVisit,
  RunSummary,
  RunView,
  TurnAbort,
  ViewValue,
} from "./run-view.js";
export {
  INPUT_CLEARED_SUMMARY,
  INPUT_SUMMARY_MAX_CHARS,
  runSummarySchema,
  runViewSchema,
  UNVISITED_NODE,
  VIEW_VALUE_MAX_BYTES,
} from "./run-view.js";
export { modelFailureOf } from "./model-failure.js";
export type { ErrorCode, SafeError } from "./safe-error.js";
export {
  asSentence,
  boundSafeMessage,
  errorCodeSchema,
  SAFE_MESSAGE_MAX_BYTES,
  safeError,
  safeErrorSchema,
} from "./safe-error.js";
export type { TraceEvent, TraceEventInput, TraceEventType } from "./trace-events.js";
export { TRACE_EVENT_TYPES, traceEventSchema } from "./trace-events.js";
export type { Conflict, RecoveryReason, Transition } from "./transition.js";
export type { ClockReason } from "./clock-reasons.js";
export { clockDueAt, isClockReason, WAKE_LEAD_MS } from "./clock-reasons.js";
export {
  adopted,
  applied,
  conflict,
  isSaved,
  recoveryReasonSchema,
  recoveryRequired,
} from "./transition.js";
export type { NodeProgressReport, ProgressState } from "./node-progress.js";
export {
  applyProgressUpdate,
  boundProgressMessage,
  nodeProgressReportSchema,
  PROGRESS_MESSAGE_MAX_CHARS,
} from "./node-progress.js";
export { codePointLength } from "./code-points.js";
export { oneLine } from "./one-line.js";
export type { AgentTurnEnding, WorkerResult } from "./worker-methods.js";
export { workerMethods, workerPushes } from "./worker-methods.js";
export type { RunPortWrites, WorkerParams, WorkerWrite } from "./worker-method-roles.js";
export { WORKER_WRITES } from "./worker-method-roles.js";
export type { AddSchedule, ScheduleRecord, ScheduleTiming } from "./schedules.js";
export {
  SCHEDULE_MAX_FAILURES,
  SCHEDULE_ON_TIME_MS,
  scheduleIdSchema,
  scheduleRecordSchema,
} from "./schedules.js";
export { DAY_MS } from "./durations.js";
export { defaultScheduleName, scheduleRequest } from "./schedule-request.js";
export type { Budget, BudgetLimit, BudgetSpend } from "./budget.js";
export { budgetSchema } from "./budget.js";
export {
  addSpend,
  budgetExceededMessage,
  budgetVerdict,
  formatBudgetSpend,
  mergeBudget,
  NO_SPEND,
  reachedLimit,
} from "./budget-math.js";
export { parseBudgetFlag } from "./budget-flag.js";
