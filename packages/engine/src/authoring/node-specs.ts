import type { AnsweredBy } from "@piw/protocol";
import type { ZodType, z } from "zod";
import type { ActionContext, NodeContext, ScopeContext, ShellReport } from "../compiler/compiled-workflow.js";
import type { AgentSessionKind, IsolatedAgentOptions } from "./agent-options.js";
import type { ApprovalGate } from "./approval.js";
import type { RetryPolicy, WaitOptions, WaitOutput } from "./clock-specs.js";

export type { ShellReport } from "../compiler/compiled-workflow.js";

/** Type-only marker that carries a node's output type to the edge types; never set at run time. */
declare const outputType: unique symbol;

/**
 * A function of the node context, checked bivariantly (like a method) so that a node written for a
 * narrower input still fits the node union; unannotated contexts then infer `unknown`, never `never`.
 */
type ContextFn<I, R> = { bivariant(ctx: NodeContext<I>): R }["bivariant"];

/**
 * A node's deadline in ms: a fixed length, `null` for none, or a function of the node's input,
 * evaluated once when the visit opens (the deadline is saved, so a resumed visit keeps it).
 */
export type TimeoutOption<I = unknown> = number | null | { bivariant(input: I): number | null }["bivariant"];

/** A static text, or one computed from the node's context when it runs. */
export type NodeText<I = unknown> = string | ContextFn<I, string>;

/** A command as an argv array (no shell), or `{ shell }` when the author explicitly wants a shell. */
export type ShellExec = readonly string[] | { readonly shell: string };

interface NodeBase<O> {
  readonly title?: string;
  readonly [outputType]?: O;
}

export interface AgentNode<I = unknown, O = unknown> extends NodeBase<O>, IsolatedAgentOptions {
  readonly kind: "agent";
  readonly prompt: NodeText<I>;
  readonly output: ZodType<O>;
  validate?(output: O, ctx: NodeContext<I>): string | undefined;
  readonly timeoutMs?: TimeoutOption<I>;
  readonly statusDetail?: NodeText<I>;
  readonly retry?: RetryPolicy;
  /** Default: `"conversation"` for a run started from Pi, `"isolated"` for any other run. */
  readonly session?: AgentSessionKind;
}

export interface ComputeNode<I = unknown, O = unknown> extends NodeBase<O> {
  readonly kind: "compute";
  run(ctx: NodeContext<I>): O | Promise<O>;
}

export interface ActionNode<I = unknown, O = unknown> extends NodeBase<O> {
  readonly kind: "action";
  run(ctx: ActionContext<I>): O | Promise<O>;
  readonly timeoutMs?: TimeoutOption<I>;
  readonly retry?: RetryPolicy;
  /** Set by `workspace()`: later shell and agent steps of its scope run in its output's `path`. */
  readonly workspace?: true;
}

export interface ShellNode<I = unknown, O = unknown> extends NodeBase<O> {
  readonly kind: "shell";
  readonly exec: ShellExec | ContextFn<I, ShellExec>;
  parse?(report: ShellReport, ctx: NodeContext<I>): O;
  readonly okExitCodes?: readonly number[];
  readonly cwd?: string;
  readonly env?: Readonly<Record<string, string>>;
  readonly timeoutMs?: TimeoutOption<I>;
  readonly retry?: RetryPolicy;
}

export interface NotifyNode<I = unknown> extends NodeBase<undefined> {
  readonly kind: "notify";
  readonly message: NodeText<I>;
}

export interface CheckpointNode<I = unknown, O = unknown> extends NodeBase<O> {
  readonly kind: "checkpoint";
  readonly prompt: NodeText<I>;
  readonly answer: ZodType<O>;
  /** Who may answer: `"human"` (the default), `"model"` or `"either"`. */
  readonly answeredBy?: AnsweredBy;
  /** Set by `approval()`: whether it is asked, its default and its deadline. */
  readonly gate?: ApprovalGate<I>;
}

export interface DecisionNode<I = unknown, C extends string = string> extends NodeBase<C> {
  readonly kind: "decision";
  readonly choices: readonly C[];
  decide(ctx: NodeContext<I>): C;
}

/** Holds the run, with no process, until a time; its output is the time it waited until. */
export interface WaitNode<I = unknown> extends NodeBase<WaitOutput> {
  readonly kind: "wait";
  readonly ms?: number;
  readonly until?: ContextFn<I, Date>;
}

/** How many branches of a parallel node must succeed: every one, the first one, or at least `atLeast`. */
export type JoinOption = "all" | "any" | { readonly atLeast: number };

/**
 * Runs its branches side by side and joins them; its output is the branches' outputs keyed by branch
 * name (`parallel()` builds it and types `B`). A branch is a workflow, an `includeWorkflow(...)`
 * with an input projection, or a single node.
 */
export interface ParallelNode<B = Readonly<Record<string, unknown>>, O = unknown> extends NodeBase<O> {
  readonly kind: "parallel";
  readonly branches: B;
  readonly join: JoinOption;
  /** How many branches may run at once; default: all of them. */
  readonly concurrency?: number;
}

/**
 * Runs one branch per item of a list computed when its visit opens, and joins them; its output is
 * the branches' outputs in item order (`map()` builds it and types `Br`).
 */
export interface MapNode<Br = unknown, O = unknown> extends NodeBase<O> {
  readonly kind: "map";
  over(ctx: ScopeContext<unknown>): readonly unknown[];
  readonly branch: Br;
  readonly join?: JoinOption;
  /** How many branches may run at once; default 4. */
  readonly concurrency?: number;
  /** The longest list accepted; default 100, at most 1000. */
  readonly maxItems?: number;
}

/** Any node, whatever its input and output types. */
export type WorkflowNode =
  | AgentNode<unknown, unknown>
  | ComputeNode<unknown, unknown>
  | ActionNode<unknown, unknown>
  | ShellNode<unknown, unknown>
  | NotifyNode<unknown>
  | CheckpointNode<unknown, unknown>
  | DecisionNode<unknown, string>
  | WaitNode<unknown>
  | ParallelNode
  | MapNode;

export type NodeKindName = WorkflowNode["kind"];

/** The output a node produces, as its edges' route functions see it. */
export type NodeOutput<Node> = Node extends { readonly [outputType]?: infer O } ? O : unknown;

interface TitleOption {
  title?: string;
}

export interface AgentOptions<I, S extends ZodType> extends TitleOption, IsolatedAgentOptions {
  session?: AgentSessionKind;
  prompt: NodeText<I>;
  output: S;
  validate?: (output: z.output<S>, ctx: NodeContext<I>) => string | undefined;
  timeoutMs?: TimeoutOption<I>;
  statusDetail?: NodeText<I>;
  retry?: RetryPolicy;
}

/**
 * A step the model completes by submitting `output`: in the user's Pi conversation, or in a fresh
 * isolated Pi session (`session: "isolated"`, the default for runs not started from Pi).
 */
export function agent<I = unknown, S extends ZodType = ZodType>(
  options: AgentOptions<I, S>,
): AgentNode<I, z.output<S>> {
  return { kind: "agent", ...options } as AgentNode<I, z.output<S>>;
}

/** Pure computation over the scope's input and earlier outputs; it may run again on recovery. */
export function compute<I = unknown, O = unknown>(
  options: TitleOption & { run: (ctx: NodeContext<I>) => O },
): ComputeNode<I, Awaited<O>> {
  return { kind: "compute", ...options } as ComputeNode<I, Awaited<O>>;
}

/** Side effects, only through `ctx.effects` so that a retry adopts what already happened. */
export function action<I = unknown, O = unknown>(
  options: TitleOption & {
    run: (ctx: ActionContext<I>) => O;
    timeoutMs?: TimeoutOption<I>;
    retry?: RetryPolicy;
  },
): ActionNode<I, Awaited<O>> {
  return { kind: "action", ...options } as ActionNode<I, Awaited<O>>;
}

export interface ShellOptions<I, O> extends TitleOption {
  exec: ShellExec | ((ctx: NodeContext<I>) => ShellExec);
  /** Turns the command's report into the node's output; it runs only for an ok exit code. */
  parse?: (report: ShellReport, ctx: NodeContext<I>) => O;
  /** Exit codes that count as success; default `[0]`. Any other code is a `failed` outcome. */
  okExitCodes?: readonly number[];
  cwd?: string;
  env?: Record<string, string>;
  timeoutMs?: TimeoutOption<I>;
  retry?: RetryPolicy;
}

/** Runs a command; the output is `parse(report)`, or the report itself without `parse`. */
export function shell<I = unknown, O = ShellReport>(options: ShellOptions<I, O>): ShellNode<I, O> {
  return { kind: "shell", ...options } as ShellNode<I, O>;
}

/** Sends a message to the run's Pi session and moves on. */
export function notify<I = unknown>(options: TitleOption & { message: NodeText<I> }): NotifyNode<I> {
  return { kind: "notify", ...options };
}

export interface CheckpointOptions<I, S extends ZodType> extends TitleOption {
  prompt: NodeText<I>;
  answer: S;
  /**
   * Who may answer: `"human"` (the default) refuses the model's answer through the `workflow` tool,
   * `"model"` refuses a person's, `"either"` takes both.
   */
  answeredBy?: AnsweredBy;
}

/** Stops the run until `prompt` is answered; the output is the accepted answer. */
export function checkpoint<I = unknown, S extends ZodType = ZodType>(
  options: CheckpointOptions<I, S>,
): CheckpointNode<I, z.output<S>> {
  return { kind: "checkpoint", ...options } as CheckpointNode<I, z.output<S>>;
}

/** Picks one of a fixed set of choices; its edge must route every choice (see `decisionEdge`). */
export function decision<I = unknown, const C extends string = string>(
  options: TitleOption & { choices: readonly C[]; decide: (ctx: NodeContext<I>) => NoInfer<C> },
): DecisionNode<I, C> {
  return { kind: "decision", ...options };
}

/** Holds the run until a time (`ms` from now, or `until` a date), with no worker and no Pi turn. */
export function wait<I = unknown>(options: WaitOptions<I>): WaitNode<I> {
  return { kind: "wait", ...options } as WaitNode<I>;
}
