import type { ZodType, z } from "zod";
import type { ScopeContext } from "../compiler/compiled-workflow.js";
import type {
  DecisionEdge,
  ExitCodeRoutes,
  GotoEdge,
  OutcomeRoutes,
  RouteEdge,
  WorkflowEdge,
} from "./edges.js";
import type { RetryPolicy } from "./clock-specs.js";
import type { NodeOutput, TimeoutOption, WorkflowNode } from "./node-specs.js";

/** Type-only markers; never set at run time. */
declare const acceptedInput: unique symbol;
declare const includeExits: unique symbol;

/** The exit a workflow ends at when it declares none. */
export const DEFAULT_EXIT = "done";
export const DEFAULT_MAX_STEPS = 1000;
/** The input field free words go to when a workflow names none (`textInput`). */
export const DEFAULT_TEXT_INPUT = "task";

/**
 * What `defineWorkflow` returns: the author's declaration, unchecked. `compileWorkflow` validates it and
 * reports every problem; the type parameters only carry the name, accepted input and exits to `tsc`.
 * Written without type arguments, it stands for any definition.
 */
export interface WorkflowDefinition<Name extends string = string, In = never, X extends string = string> {
  readonly kind: "workflow";
  readonly name: Name;
  readonly title?: string;
  readonly summary?: string;
  readonly input?: ZodType;
  readonly textInput?: string;
  readonly startAt: string;
  readonly nodes: Readonly<Record<string, WorkflowNode>>;
  readonly includes: Readonly<Record<string, WorkflowInclude>>;
  readonly exits: readonly X[];
  readonly edges: Readonly<Record<string, WorkflowEdge>>;
  readonly presentationPrompt?: string;
  readonly notifyModel?: NotifyModelOption;
  readonly maxSteps: number;
  readonly defaults?: WorkflowDefaults;
  readonly [acceptedInput]?: (input: In) => void;
}

/** A child workflow mounted in a parent; the parent leaves it through `<mount>.<exit>` edges. */
export interface WorkflowInclude<X extends string = string> {
  readonly kind: "include";
  readonly workflow: WorkflowDefinition;
  readonly title?: string;
  /** The child's input: a value, or a projection of the parent scope. Absent: the child gets undefined. */
  readonly input?: unknown;
  readonly [includeExits]?: X;
}

// A definition typed without its input (`WorkflowDefinition`) accepts any input.
type AcceptedInputOf<W> = W extends { readonly [acceptedInput]?: (input: infer In) => void }
  ? [In] extends [never]
    ? unknown
    : In
  : unknown;
type ExitsOf<W> = W extends WorkflowDefinition<string, never, infer X> ? X : never;
type IncludeExitsOf<Inc> = Inc extends { readonly [includeExits]?: infer X extends string } ? X : never;

/** How a parent computes a child's input: a value or a function of the parent scope. */
export type IncludeInput<In, PI = unknown> = In | ((ctx: ScopeContext<PI>) => In);

export interface IncludeOptions<In, PI = unknown> {
  title?: string;
  input: IncludeInput<In, PI>;
}

type IncludeArgs<W, PI> =
  undefined extends AcceptedInputOf<W>
    ? [options?: Partial<IncludeOptions<AcceptedInputOf<W>, PI>>]
    : [options: IncludeOptions<AcceptedInputOf<W>, PI>];

/** Mount `child` in a parent workflow; `tsc` checks `input` against the child's input schema. */
export function includeWorkflow<W extends WorkflowDefinition, PI = unknown>(
  child: W,
  ...args: IncludeArgs<W, PI>
): WorkflowInclude<ExitsOf<W>> {
  const [options] = args;
  return { kind: "include", workflow: child, ...options };
}

type InputAccepted<S> = S extends ZodType ? z.input<S> : undefined;

/** The top-level input keys that take a string: where free words can go. */
type TextInputKey<S> = S extends ZodType
  ? {
      [K in keyof z.input<S>]-?: string extends NonNullable<z.input<S>[K]> ? K : never;
    }[keyof z.input<S>] &
      string
  : never;
type Names<R> = keyof R & string;
type Target<N, M, X extends string> = Names<N> | Names<M> | X;

// A node's edge may route its failures too (to a node or include, `R`: a failure never ends the run at an
// exit unseen); only a shell node has exit codes to route on.
type EdgeFor<Node, T extends string, R extends string> = (Node extends {
  readonly kind: "decision";
  readonly choices: readonly (infer C extends string)[];
}
  ? DecisionEdge<Record<C, T>, C>
  : GotoEdge<T> | RouteEdge<NodeOutput<Node>, T>) &
  OutcomeRoutes<R> &
  (Node extends { readonly kind: "shell" } ? ExitCodeRoutes<R> : unknown);

type MountExitSource<M> = { [K in Names<M>]: `${K}.${IncludeExitsOf<M[K]>}` }[Names<M>];

/** Every node and every exit of every include needs exactly one edge; names are checked by `tsc`. */
export type WorkflowEdges<N, M, X extends string> = {
  [K in keyof N]: EdgeFor<N[K], Target<N, M, X>, Names<N> | Names<M>>;
} & {
  [K in MountExitSource<M>]: GotoEdge<Target<N, M, X>> | RouteEdge<unknown, Target<N, M, X>>;
};

export interface WorkflowSpec<
  Name extends string,
  S extends ZodType | undefined,
  N extends Record<string, WorkflowNode>,
  M extends Record<string, WorkflowInclude>,
  X extends string,
> {
  name: Name;
  title?: string;
  /** One line on what the workflow is for, shown by `piw workflows` and `/workflow` completions. */
  summary?: string;
  /** A zod schema for the run input; nodes see its parsed output as `ctx.input`. */
  input?: S;
  /**
   * The input field that free words go to (`piw run <name> <words>`, `/workflow <name> <words>`);
   * a top-level string field of `input`. Default: `task`.
   */
  textInput?: NoInfer<TextInputKey<S>>;
  startAt: NoInfer<Names<N> | Names<M>>;
  nodes: N;
  /** Child workflows mounted by name (`includeWorkflow`); edges enter a mount by its name. */
  includes?: M;
  /** Named ways out of this workflow; default `["done"]`. */
  exits?: readonly X[];
  edges: NoInfer<WorkflowEdges<N, M, X>>;
  /** Instructions for presenting the final output to the user in Pi. */
  presentationPrompt?: string;
  /**
   * When the model started the run in Pi: whether a follow-up turn tells it that the run failed or
   * timed out (`onFailure`), or that someone else cancelled it (`onCancel`). Both default to true.
   */
  notifyModel?: NotifyModelOption;
  /** Bound on node visits per run, so that a loop cannot run forever; default 1000. */
  maxSteps?: number;
  /** Settings for this workflow's nodes that set none themselves: the deadline of each kind. */
  defaults?: WorkflowDefaults;
}

export interface NotifyModelOption {
  onFailure?: boolean;
  onCancel?: boolean;
}

/** A workflow's defaults for its own nodes (not those of included workflows, which have their own). */
export interface WorkflowDefaults {
  timeoutMs?: { agent?: TimeoutOption; shell?: TimeoutOption; action?: TimeoutOption };
  /** The retry policy of this workflow's agent, shell and action nodes that set none. */
  retry?: RetryPolicy;
}

/** Declare a workflow graph. Nothing is checked here beyond types: `compileWorkflow` reports problems. */
export function defineWorkflow<
  const Name extends string,
  N extends Record<string, WorkflowNode>,
  const X extends string = typeof DEFAULT_EXIT,
  M extends Record<string, WorkflowInclude> = Record<never, WorkflowInclude>,
  S extends ZodType | undefined = undefined,
>(spec: WorkflowSpec<Name, S, N, M, X>): WorkflowDefinition<Name, InputAccepted<S>, X> {
  const { exits, includes, maxSteps, edges, ...rest } = spec;
  return {
    ...rest,
    kind: "workflow",
    includes: includes ?? {},
    exits: exits ?? [DEFAULT_EXIT as X],
    edges: edges as Record<string, WorkflowEdge>,
    maxSteps: maxSteps ?? DEFAULT_MAX_STEPS,
  };
}

/** True for values built by `defineWorkflow` (in this or another copy of the engine). */
export function isWorkflowDefinition(value: unknown): value is WorkflowDefinition {
  return typeof value === "object" && value !== null && (value as { kind?: unknown }).kind === "workflow";
}
