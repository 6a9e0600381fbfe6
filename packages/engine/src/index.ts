export type { AgentSessionKind, AgentThinking, IsolatedAgentOptions } from "./authoring/agent-options.js";
export type {
  ActionNode,
  AgentNode,
  BranchOutput,
  JoinOption,
  MapNode,
  MapOptions,
  MapOutput,
  ParallelBranch,
  ParallelNode,
  ParallelOptions,
  ParallelOutput,
  AgentOptions,
  CheckpointNode,
  CheckpointOptions,
  ComputeNode,
  DecisionEdge,
  DecisionNode,
  ExitCodeRoutes,
  GotoEdge,
  IncludeInput,
  IncludeOptions,
  NodeOutput,
  NodeText,
  NotifyModelOption,
  NotifyNode,
  OutcomeRoutes,
  RouteEdge,
  ShellExec,
  ShellNode,
  ShellOptions,
  RetryBackoff,
  RetryOn,
  RetryPolicy,
  ShellReport,
  TimeoutOption,
  WaitNode,
  WaitOptions,
  WaitOutput,
  WorkflowDefaults,
  WorkflowDefinition,
  WorkflowEdge,
  WorkflowEdges,
  WorkflowInclude,
  WorkflowNode,
  WorkflowSpec,
  WrittenTextFile,
  CommittedChanges,
  ApprovalAnswer,
  ApprovalGate,
  ApprovalMode,
  ApprovalNode,
  ApprovalOptions,
  ApprovalOutput,
  DefaultApprovalChoice,
  WorkspaceMode,
  WorkspaceNode,
  WorkspaceOptions,
  WorkspaceOutput,
} from "./authoring/index.js";
export {
  action,
  agent,
  approval,
  approvalChoice,
  builtinWorkflow,
  DEFAULT_APPROVAL_CHOICES,
  checkpoint,
  commitChanges,
  compute,
  DEFAULT_EXIT,
  DEFAULT_MAX_STEPS,
  DEFAULT_TIMEOUT_MS,
  decision,
  decisionEdge,
  defineWorkflow,
  fileDigest,
  includeWorkflow,
  MAX_TIMEOUT_MS,
  map,
  notify,
  parallel,
  ProgressInvalid,
  shell,
  textDigest,
  wait,
  WorkflowError,
  writeTextFile,
  WORKSPACE_EFFECT,
  workspace,
} from "./authoring/index.js";
export type { CompileProblem } from "./compiler/compile-error.js";
export type { NodeTimeout, TimedNodeKind } from "./compiler/deadlines.js";
export { CompileError } from "./compiler/compile-error.js";
export { compileWorkflow } from "./compiler/compile-workflow.js";
export type {
  ActionContext,
  CompiledActionNode,
  CompiledAgentNode,
  CompiledCheckpointNode,
  CompiledComputeNode,
  CompiledDecisionNode,
  CompiledNode,
  CompiledNotifyNode,
  CompiledShellNode,
  CompiledWorkflow,
  FailureOutcome,
  ManagedEffects,
  NextStep,
  NodeContext,
  NodeFailureInfo,
  NodeProgressUpdate,
  ScopeContext,
  ShellCommand,
} from "./compiler/compiled-workflow.js";
export type { GraphManifest, ManifestTarget } from "./compiler/graph-manifest.js";
export type { JsonSchema, JsonSchemaResult } from "./compiler/json-schema-of.js";
export { jsonSchemaOf, UNREPRESENTABLE_NOTE } from "./compiler/json-schema-of.js";
export { graphManifestSchema } from "./compiler/graph-manifest.js";
export { RESERVED_WORKFLOW_NAMES } from "./compiler/names.js";
export type { RoutingErrorCode } from "./compiler/runtime-errors.js";
export { RoutingError, ScopeInputError } from "./compiler/runtime-errors.js";
export type { AcceptCommandOptions, CommandAcceptance, WorkflowLoad } from "./executor/accept-command.js";
export { acceptRunCommand } from "./executor/accept-command.js";
export { AgentEventQueue } from "./executor/agent-event-queue.js";
export { forwardingPort, RUN_PORT_METHODS } from "./executor/forwarding-port.js";
export { LatestThrottle } from "./executor/latest-throttle.js";
export { NODE_PROGRESS_INTERVAL_MS } from "./executor/visit-progress.js";
export type {
  AgentPlacement,
  IsolatedAgentReport,
  IsolatedAgentSession,
  IsolatedAgentSessions,
  IsolatedStep,
} from "./executor/agent-session.js";
export { agentSessionFor, READ_ONLY_TOOLS } from "./executor/agent-session.js";
export type { ExecuteOptions, ExecutionOutcome } from "./executor/execute-command.js";
export { executeRun } from "./executor/execute-command.js";
export { ValueTooLarge } from "./executor/execution-signals.js";
export type { MemoryRunOptions } from "./executor/memory-port.js";
export { MemoryRunPort } from "./executor/memory-port.js";
export { MAX_AGENT_NUDGES, MAX_LOST_AGENT_TURNS } from "./executor/agent-step.js";
export type { AgentEvent, RunPort, SubmissionVerdict } from "./executor/run-port.js";
export type { DebugLog, FailureSite, SafeFailure } from "./executor/safe-failure.js";
export { toSafeError } from "./executor/safe-failure.js";
export type { EffectId, NodeVisitId } from "./identity/execution-identity.js";
export type { LaunchRequest, PreparedLaunch } from "./launch/prepare-launch.js";
export { LaunchRefused } from "./launch/launch-refused.js";
export {
  agentStepPaths,
  describeIssuePath,
  listWorkflowFiles,
  loadForLaunch,
  prepareInput,
  prepareLaunch,
  reserveRequest,
} from "./launch/prepare-launch.js";
export { registerBuiltinWorkflow } from "./loader/builtin-registry.js";
export { builtinRevision } from "./loader/builtin-revision.js";
export type { LoadedWorkflow } from "./loader/load-workflow-file.js";
export { AUTHORING_MODULE, loadWorkflowFile, WORKFLOW_FILE_SUFFIX } from "./loader/load-workflow-file.js";
export type { ResolveWorkflowOptions } from "./loader/resolve-workflow.js";
export {
  isWorkflowPath,
  loadBuiltinWorkflow,
  resolveWorkflow,
  workflowSearchDirs,
} from "./loader/resolve-workflow.js";
export type { WorkflowLoadErrorCode } from "./loader/workflow-load-error.js";
export { WorkflowLoadError } from "./loader/workflow-load-error.js";
export type { StartableWorkflow, WorkflowOrigin } from "./preflight/describe-workflows.js";
export { describeBuiltins, describeStartableWorkflows } from "./preflight/describe-workflows.js";
export type {
  LaunchPreflight,
  PreflightEnv,
  PreflightOptions,
  PreflightOutcome,
} from "./preflight/evaluate-preflight.js";
export {
  DEFAULT_PREFLIGHT_TIMEOUT_MS,
  evaluatePreflight,
  preflightLaunch,
  readPreflightEnv,
} from "./preflight/evaluate-preflight.js";
export type {
  IsolatedStepModel,
  ModelCheck,
  ModelCheckRequest,
  ModelCheckResult,
} from "./preflight/model-check.js";
export type { ServePreflightOptions } from "./preflight/serve-preflight.js";
export { servePreflight } from "./preflight/serve-preflight.js";
