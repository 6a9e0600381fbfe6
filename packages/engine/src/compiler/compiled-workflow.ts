import type { Budget } from "@piw/protocol";
import type { AnswerCheck, AnsweredBy, JoinPolicy, ModelNotices } from "@piw/protocol";
import type { ZodType } from "zod";
import type { AgentSessionKind, IsolatedAgentOptions } from "../authoring/agent-options.js";
import type { NodeTimeout } from "./deadlines.js";
import type { CompiledRetry } from "./retry-policy.js";
import type { GraphManifest } from "./graph-manifest.js";
import type { JsonSchema } from "./json-schema-of.js";

/** What workflow-authored functions receive when a node runs. */
export interface NodeContext<I = unknown> {
  /** The (projected) input of the node's workflow scope. */
  input: I;
  /** The latest output of each node already run in the same scope, by local name. */
  outputs: Record<string, unknown>;
  /**
   * By local name, each node of the same scope whose latest visit failed and was routed (`onFailure`,
   * `onTimeout`, `onExitCode`); a later success of that node removes its entry.
   */
  failures: Record<string, NodeFailureInfo>;
  /** The full compiled path, the local name and the visit number of this node visit. */
  node: { path: string; name: string; visit: number };
  /** Inside a map node's branch: the index of its item (`ctx.input`) in the map's list. */
  mapIndex?: number;
  /** Aborted on cancel or timeout. */
  signal: AbortSignal;
  /**
   * Report how far this visit has got: `done` of `total` (finite numbers >= 0, done <= total) and a
   * one-line message (cut to 200 characters). A field left out keeps its last value, `null` clears
   * it. Every view shows the latest, with an ETA when `total` is known. Cheap to call often: the
   * worker sends the latest at most every 250 ms. A bad update throws ProgressInvalid (code
   * `progress_invalid`) and reports nothing; uncaught, it fails the node like any other throw.
   * `eta` is the author's own estimate of when the work ends at the latest; `scope: "run"` makes the
   * report the whole run's, shown also after this step ends and while the run waits.
   */
  progress(update: NodeProgressUpdate): void;
}

/** What `ctx.progress` takes; see NodeContext.progress. */
export interface NodeProgressUpdate {
  done?: number | null;
  total?: number | null;
  message?: string | null;
  /** When the work ends at the latest, as the author knows it (a deadline): a Date or epoch ms; null clears it. */
  eta?: Date | number | null;
  /**
   * `step` (the default): this visit's progress, gone when the visit ends. `run`: the whole run's,
   * kept on view after the visit ends and while the run is parked, until a newer run-wide report
   * replaces it or the run ends.
   */
  scope?: "step" | "run";
}

/**
 * What a command reported: its exit code, its stdout (up to the output limit) and the tail of its
 * stderr, each without trailing whitespace.
 */
export interface ShellReport {
  exitCode: number;
  stdout: string;
  stderr: string;
}

/** A routed failure as later nodes see it: its code and bounded message, never the node's input. */
export interface NodeFailureInfo {
  status: "failed" | "timed_out";
  code: string;
  message: string;
  /** A shell node whose exit code was not ok: what the command reported. */
  shell?: ShellReport;
}

/** Managed effects: the engine derives their identity from the node visit, never from the author. */
export interface ManagedEffects {
  idempotent<R>(type: string, request: unknown, fn: (request: unknown) => Promise<R> | R): Promise<R>;
  manual<R>(type: string, request: unknown, fn: (request: unknown) => Promise<R> | R): Promise<R>;
}

/** How `ctx.exec` runs one command. */
export interface ActionExecOptions {
  /** The folder, relative to the run's workspace (or the run's folder); default that folder. */
  cwd?: string;
  /** Added to the run's environment. */
  env?: Record<string, string>;
  /** Kill the command (and its process group) past this many milliseconds; default the node's deadline. */
  timeoutMs?: number;
}

export interface ActionContext<I = unknown> extends NodeContext<I> {
  effects: ManagedEffects;
  /** The run this visit belongs to: its ID and its (root) workflow's name. */
  run: { id: string; workflow: string };
  /**
   * Run a command as a shell node does (argv, or `{ shell }`; in the run's workspace, with the run's
   * environment, bounded output, killed with its process group on cancel) and get its report, whatever
   * its exit code. Call it inside an effect's `fn` to make the command that effect.
   */
  exec(
    command: readonly string[] | { readonly shell: string },
    options?: ActionExecOptions,
  ): Promise<ShellReport>;
}

/** What an include's input projection receives: the parent scope's input and outputs. */
export interface ScopeContext<I = unknown> {
  input: I;
  outputs: Record<string, unknown>;
}

export type ShellCommand = { argv: string[] } | { shell: string };

interface CompiledNodeBase {
  /** Full compiled path, e.g. `docs/workspace/inspect`. */
  path: string;
  /** Local name inside its workflow, e.g. `inspect`. */
  name: string;
  /** Full path of the mount the node lives in; '' for the root workflow. */
  scope: string;
  /**
   * The sequence of visits the node runs in: the innermost parallel branch around it
   * (`<fork path>/<branch>`), or '' for the run's own sequence.
   */
  lane: string;
  title: string;
  /** Inside a map node's branch: the index of its item in the innermost map around it. */
  mapIndex?: number;
}

export interface CompiledComputeNode extends CompiledNodeBase {
  kind: "compute";
  run(ctx: NodeContext): unknown;
}

export interface CompiledActionNode extends CompiledNodeBase {
  kind: "action";
  run(ctx: ActionContext): Promise<unknown> | unknown;
  /** Built by `workspace()`: later shell and agent steps of its scope run in its output's `path`. */
  workspace: boolean;
  /** The deadline of each visit; `timeoutAtStart` turns it into a length when the visit opens. */
  timeout: NodeTimeout;
  /** The retry policy of its failed attempts; null: a failure is final. */
  retry: CompiledRetry | null;
}

export interface CompiledShellNode extends CompiledNodeBase {
  kind: "shell";
  command(ctx: NodeContext): ShellCommand;
  /** Without `parse`, the node's output is the command's report. */
  parse?(report: ShellReport, ctx: NodeContext): unknown;
  /** Exit codes that count as success. */
  okExitCodes: readonly number[];
  cwd?: string;
  env?: Record<string, string>;
  /** The deadline of each visit; `timeoutAtStart` turns it into a length when the visit opens. */
  timeout: NodeTimeout;
  retry: CompiledRetry | null;
}

export interface CompiledNotifyNode extends CompiledNodeBase {
  kind: "notify";
  message(ctx: NodeContext): string;
}

export interface CompiledCheckpointNode extends CompiledNodeBase {
  kind: "checkpoint";
  prompt(ctx: NodeContext): string;
  answer: ZodType;
  /** The answer's JSON Schema, as `piw status`, the widget and the answer dialog show it; null when too large. */
  answerSchema: JsonSchema | null;
  /** Who may answer: the host refuses the model's answer to a `human` checkpoint. */
  answeredBy: AnsweredBy;
  /** What the host checks of an answer before saving a continuation, sent with the waiting run. */
  answerCheck: AnswerCheck;
  /** Built by `approval()`: whether it is asked, its default, and its deadline; null for a plain checkpoint. */
  gate: CompiledGate | null;
}

export interface CompiledGate {
  mode(ctx: NodeContext): "required" | "auto" | "skip";
  defaultChoice: string;
  deadlineMs: number | null;
}

export interface CompiledAgentNode extends CompiledNodeBase {
  kind: "agent";
  prompt(ctx: NodeContext): string;
  output: ZodType;
  /** The output's JSON Schema, shown to the model in the step contract. */
  outputSchema: JsonSchema;
  /** Returns a message saying what is wrong with a schema-valid output, or undefined to accept it. */
  validate?(output: unknown, ctx: NodeContext): string | undefined;
  /** The deadline of each visit; `timeoutAtStart` turns it into a length when the visit opens. */
  timeout: NodeTimeout;
  statusDetail?(ctx: NodeContext): string;
  retry: CompiledRetry | null;
  /** Where the step runs; `"default"` lets the run's origin decide (`agentSessionFor`). */
  session: AgentSessionKind | "default";
  /** The options of an isolated session, as written (checked); empty for a conversation step. */
  isolated: IsolatedAgentOptions;
}

export interface CompiledDecisionNode extends CompiledNodeBase {
  kind: "decision";
  choices: readonly string[];
  decide(ctx: NodeContext): string;
}

/** Holds the run until a time: a length from when it is first reached, or a date from its context. */
export interface CompiledWaitNode extends CompiledNodeBase {
  kind: "wait";
  due: { kind: "ms"; ms: number } | { kind: "until"; until(ctx: NodeContext): unknown };
}

/** One branch of a parallel node: its scope (`<fork path>/<branch>`, also its lane) and first node. */
export interface CompiledBranch {
  name: string;
  title: string;
  scope: string;
  startPath: string;
}

/** Runs its branches side by side; its visit stays open until the join is decided. */
export interface CompiledParallelNode extends CompiledNodeBase {
  kind: "parallel";
  branches: readonly CompiledBranch[];
  join: JoinPolicy;
  /** At most this many branches at once; null: all of them. */
  concurrency: number | null;
}

/**
 * Runs its branch once per item of the list `over` returns when the visit opens (saved before any
 * branch starts). The branch is compiled once, as a template at `<map>/each` (map-paths.ts); item
 * `i` runs it at `<map>/<i>`.
 */
export interface CompiledMapNode extends CompiledNodeBase {
  kind: "map";
  over(ctx: ScopeContext): unknown;
  /** The template branch: scope `<map>/each`, its first node's template path. */
  branch: CompiledBranch;
  join: JoinPolicy;
  concurrency: number;
  maxItems: number;
}

export type CompiledNode =
  | CompiledComputeNode
  | CompiledActionNode
  | CompiledShellNode
  | CompiledNotifyNode
  | CompiledCheckpointNode
  | CompiledAgentNode
  | CompiledDecisionNode
  | CompiledWaitNode
  | CompiledParallelNode
  | CompiledMapNode;

/** A visit's ending that an outcome route can take; `exitCode` only for a shell node's non-ok exit. */
export type FailureOutcome = { status: "failed"; exitCode?: number } | { status: "timed_out" };

/** Where a node's output leads: a node, an exit of the root workflow, or the join of a parallel node. */
export type NextStep =
  | { kind: "node"; path: string }
  | { kind: "exit"; exit: string }
  | { kind: "join"; path: string };

export interface CompiledWorkflow {
  name: string;
  title?: string;
  /** One line on what the workflow is for. */
  summary?: string;
  /** The input field free words go to; `task` when the workflow names none. */
  textInput: string;
  digest: string;
  manifest: GraphManifest;
  startPath: string;
  maxSteps: number;
  inputSchema?: ZodType;
  presentationPrompt?: string;
  /** The root workflow's budget, if it declares one. */
  budget?: Budget;
  /** Which ends of a run the model that started it hears of in a follow-up turn (defaults filled in). */
  notifyModel: ModelNotices;
  /** By full path. */
  nodes: ReadonlyMap<string, CompiledNode>;
  /**
   * Where a node's output leads: another node's full path, or the end of the root workflow (exit name).
   * Throws a RoutingError when the path is unknown or a route picks an undeclared target.
   */
  next(path: string, output: unknown): NextStep;
  /**
   * Where a visit of `path` that ended `outcome` goes instead of ending the run: a node's full path,
   * or null when its edge has no route for it.
   */
  failureRoute(path: string, outcome: FailureOutcome): string | null;
  /**
   * The input of a scope ('' = root, 'docs', 'docs/workspace'), computed from the run input and the latest
   * outputs by full path. Throws a ScopeInputError when an input fails its workflow's schema.
   */
  scopeInput(scope: string, runInput: unknown, outputsByPath: ReadonlyMap<string, unknown>): unknown;
  /** The `outputs` a node in `scope` sees: latest outputs of that scope's own nodes, by local name. */
  scopeOutputs(scope: string, outputsByPath: ReadonlyMap<string, unknown>): Record<string, unknown>;
}
