export type { AgentSessionKind, AgentThinking, IsolatedAgentOptions } from "./agent-options.js";
// The authoring API. Workflow files import it as "piw"; the loader maps that name to this module.

export type {
  ActionContext,
  ActionExecOptions,
  ManagedEffects,
  NodeContext,
  NodeFailureInfo,
  NodeProgressUpdate,
  ScopeContext,
} from "../compiler/compiled-workflow.js";
export type {
  IncludeInput,
  IncludeOptions,
  NotifyModelOption,
  WorkflowDefaults,
  WorkflowDefinition,
  WorkflowEdges,
  WorkflowInclude,
  WorkflowSpec,
} from "./define-workflow.js";
export {
  DEFAULT_EXIT,
  DEFAULT_MAX_STEPS,
  DEFAULT_TEXT_INPUT,
  defineWorkflow,
  includeWorkflow,
} from "./define-workflow.js";
export { DEFAULT_TIMEOUT_MS, MAX_TIMEOUT_MS } from "../compiler/deadlines.js";
export type {
  DecisionEdge,
  ExitCodeRoutes,
  GotoEdge,
  OutcomeRoutes,
  RouteEdge,
  WorkflowEdge,
} from "./edges.js";
export { decisionEdge } from "./edges.js";
export type {
  ActionNode,
  AgentNode,
  AgentOptions,
  CheckpointNode,
  CheckpointOptions,
  ComputeNode,
  DecisionNode,
  NodeOutput,
  NodeText,
  NotifyNode,
  JoinOption,
  MapNode,
  ParallelNode,
  ShellExec,
  TimeoutOption,
  ShellNode,
  WaitNode,
  ShellOptions,
  ShellReport,
  WorkflowNode,
} from "./node-specs.js";
export { action, agent, checkpoint, compute, decision, notify, shell, wait } from "./node-specs.js";
export type { BranchOutput, ParallelBranch, ParallelOptions, ParallelOutput } from "./parallel.js";
export { parallel } from "./parallel.js";
export type { MapOptions, MapOutput } from "./map.js";
export { map } from "./map.js";
export type { RetryBackoff, RetryOn, RetryPolicy, WaitOptions, WaitOutput } from "./clock-specs.js";
export type { WrittenTextFile } from "./text-files.js";
export { fileDigest, textDigest, writeTextFile } from "./text-files.js";
export type { CommittedChanges } from "./git-commit.js";
export { commitChanges } from "./git-commit.js";
export { builtinWorkflow } from "./builtin-workflow.js";
export { WorkflowError } from "./workflow-error.js";
export type { WorkspaceMode, WorkspaceNode, WorkspaceOptions, WorkspaceOutput } from "./workspace.js";
export { WORKSPACE_EFFECT, workspace } from "./workspace.js";
export type { ApprovalGate, ApprovalMode } from "./approval-gate.js";
export type {
  ApprovalAnswer,
  ApprovalNode,
  ApprovalOptions,
  ApprovalOutput,
  DefaultApprovalChoice,
} from "./approval.js";
export { approval, approvalChoice, DEFAULT_APPROVAL_CHOICES } from "./approval.js";
export { ProgressInvalid } from "../executor/visit-progress.js";
