export type { AgentSessionReport, TranscriptEntry } from "./agent-session.js";
export { AGENT_SESSION_EFFECT, agentSessionReportSchema, transcriptEntrySchema } from "./agent-session.js";
export type { AnswerCheck, AnsweredBy, Answerer, AnswerVerdict } from "./answer-check.js";
export {
  ANSWER_SCHEMA_MAX_BYTES,
  answerCheckSchema,
  answeredBySchema,
  answererSchema,
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
  LostReplyPolicy,
} from "./client-methods.js";
export { clientKindSchema, clientMethods, clientPushes, lostReplyPolicy } from "./client-methods.js";
export type { EffectState, NodeVisitState, RunSnapshot, SavedVisit } from "./execution.js";
export { effectStateSchema, nodeVisitStateSchema, runSnapshotSchema, savedVisitSchema } from "./execution.js";
export type { FrameKind, FrameShape } from "./frame-shape.js";
export { inspectFrame, utf8ByteLength } from "./frame-shape.js";
export type {
  EncodedFrame,
  FrameLimits,
  ProtocolError,
  ProtocolErrorCode,
  PushFrame,
  ReplyFrame,
  RequestFrame,
  SplitItem,
} from "./framing.js";
export {
  clientInboundSchema,
  encodeFrame,
  encodeFrameWithin,
  LineSplitter,
  MAX_FRAME_BYTES,
  MAX_FRAME_DEPTH,
  PROTOCOL_VERSION,
  protocolErrorCodeSchema,
  protocolErrorSchema,
  pushFrameSchema,
  replyFrameSchema,
  requestFrameSchema,
} from "./framing.js";
export type { GraphManifest, ManifestTarget } from "./graph-manifest.js";
export { graphManifestSchema, manifestTargetSchema } from "./graph-manifest.js";
export type { JsonValue, NodePath, RequestKey, RunId } from "./ids.js";
export {
  generationSchema,
  jsonValueSchema,
  newRunId,
  nodePathSchema,
  opaqueIdSchema,
  requestKeySchema,
  revisionSchema,
  runIdSchema,
  visitNumberSchema,
} from "./ids.js";
export { isReminderMessageId, reminderKind, runMessageId, visitMessageId } from "./message-ids.js";
export type { AdvanceNodeVisit, NodeVisitAdvance } from "./node-advance.js";
export { advanceNodeVisitSchema, nodeVisitAdvanceSchema } from "./node-advance.js";
export type {
  PreflightLaunch,
  PreflightRefusal,
  PreflightReply,
  PreflightRequest,
  WorkflowDescription,
} from "./preflight.js";
export {
  PREFLIGHT_MAX_PROBLEMS,
  PREFLIGHT_MAX_TEXT,
  preflightLaunchSchema,
  preflightRefusalSchema,
  preflightReplySchema,
  preflightRequestSchema,
  workflowDescriptionSchema,
} from "./preflight.js";
export type {
  Handler,
  Handlers,
  MethodTable,
  PushHandlers,
  PushOutcome,
  PushTable,
  RpcPeerOptions,
} from "./rpc-peer.js";
export { dispatchPushes, RpcError, RpcPeer, toProtocolError } from "./rpc-peer.js";
export type { CheckpointAnswer, RunCommand, RunCommandType } from "./run-command.js";
export { assertNever, checkpointAnswerSchema, runCommandSchema } from "./run-command.js";
export type {
  HistoryEffect,
  HistoryEvent,
  HistoryMessage,
  HistoryStep,
  HistoryTurn,
  RunHistory,
} from "./run-history.js";
export {
  historyEffectSchema,
  historyEventSchema,
  historyMessageSchema,
  historyStepSchema,
  historyTurnSchema,
  runHistorySchema,
} from "./run-history.js";
export type {
  EffectMode,
  EffectResult,
  EndTurn,
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
  RunRecord,
  SettleEffect,
  SourceIdentity,
  StartNodeVisit,
  StartTurn,
  SubmissionResult,
  ModelNotices,
  TerminalFact,
  TerminalFacts,
  TurnOwnership,
  TurnRecord,
  VisitDeadline,
  WorkerExit,
  WorkerExitDecision,
} from "./run-records.js";
export {
  effectModeSchema,
  effectResultSchema,
  endTurnSchema,
  enqueueMessageSchema,
  fenceSchema,
  finishNodeVisitSchema,
  messageKindSchema,
  modelNoticesSchema,
  messageRecordSchema,
  nodeKindSchema,
  nodeVisitResultSchema,
  prepareContinuationSchema,
  prepareRestartSchema,
  reserveEffectSchema,
  redefineRunSchema,
  reservePreparedRunSchema,
  resolveManualEffectSchema,
  runEndingSchema,
  runRecordSchema,
  settleEffectSchema,
  sourceIdentitySchema,
  MAX_NODE_TIMEOUT_MS,
  startNodeVisitSchema,
  startTurnSchema,
  submissionVerdictSchema,
  submitOutputSchema,
  turnEndReasonSchema,
  turnOwnershipSchema,
  turnRecordSchema,
  visitDeadlineSchema,
  workerExitDecisionSchema,
  workerExitSchema,
} from "./run-records.js";
export type { RunOrigin, RunOriginCommand, RunStatus, TerminalOutcome } from "./run-status.js";
export {
  ACTIVE_STATUSES,
  isActiveStatus,
  isAllowedTransition,
  isTerminalStatus,
  RUN_TRANSITIONS,
  runOriginCommandSchema,
  runOriginSchema,
  runStatusSchema,
  TERMINAL_STATUSES,
  terminalOutcomeSchema,
} from "./run-status.js";
export type {
  CheckpointView,
  CurrentWork,
  NodeView,
  RunSummary,
  RunView,
  TurnAbort,
  ViewValue,
} from "./run-view.js";
export {
  checkpointViewSchema,
  currentWorkSchema,
  nodeViewSchema,
  runSummarySchema,
  runViewSchema,
  turnAbortSchema,
  VIEW_VALUE_MAX_BYTES,
  viewValueSchema,
} from "./run-view.js";
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
export type { Conflict, RecoveryCode, RecoveryReason, ResourceKind, Transition } from "./transition.js";
export type { ClockReason } from "./clock-reasons.js";
export { clockDueAt, isClockReason, WAKE_LEAD_MS } from "./clock-reasons.js";
export {
  adopted,
  applied,
  conflict,
  conflictSchema,
  isSaved,
  recoveryReasonSchema,
  recoveryRequired,
  resourceKindSchema,
  transitionSchema,
} from "./transition.js";
export type { AgentTurnEnding, WorkerMethod, WorkerParams, WorkerResult } from "./worker-methods.js";
export { agentTurnEndingSchema, workerMethods, workerPushes } from "./worker-methods.js";
