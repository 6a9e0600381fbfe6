import type { JoinPolicy } from "@piw/protocol";
import {
  DEFAULT_EXIT,
  DEFAULT_MAX_STEPS,
  isWorkflowDefinition,
  type WorkflowDefinition,
  type WorkflowInclude,
} from "../authoring/define-workflow.js";
import type { WorkflowNode } from "../authoring/node-specs.js";
import type { CompiledParallelNode } from "./compiled-workflow.js";
import { joinPath, localNameProblem } from "./names.js";

type Fields = Record<string, unknown>;
type Check = (message: string) => void;

/** Where a node sits (the fields of `NodePlace` the parallel node needs). */
interface ParallelPlace {
  path: string;
  name: string;
  scope: string;
  lane: string;
  title: string;
}

/** A branch as a scope to collect: the workflow it runs and how its input comes from the parent scope. */
export interface BranchScope {
  name: string;
  title: string;
  definition: WorkflowDefinition;
  include: WorkflowInclude;
}

export function recordOf(value: unknown): Fields | undefined {
  return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Fields) : undefined;
}

/** The join policy; `k` of `atLeast` goes from 1 to `most` (`mostWhat` says what that bound is). */
export function joinOf(
  value: unknown,
  most: number,
  problem: Check,
  mostWhat = "the number of branches",
): JoinPolicy | undefined {
  if (value === "all") return { kind: "all" };
  if (value === "any") return { kind: "any" };
  const atLeast = recordOf(value)?.atLeast;
  if (recordOf(value) !== undefined && Object.keys(value as object).length === 1 && atLeast !== undefined) {
    if (typeof atLeast === "number" && Number.isInteger(atLeast) && atLeast >= 1 && atLeast <= most) {
      return { kind: "atLeast", count: atLeast };
    }
    problem(
      `join { atLeast: k } needs an integer k from 1 to ${mostWhat} (${most}); got ${typeof atLeast === "number" ? atLeast : typeof atLeast}`,
    );
    return undefined;
  }
  problem('join must be "all", "any" or { atLeast: k }');
  return undefined;
}

function concurrencyOf(value: unknown, problem: Check): number | null | undefined {
  if (value === undefined) return null;
  if (typeof value === "number" && Number.isInteger(value) && value >= 1) return value;
  problem("concurrency must be an integer of at least 1 (how many branches run at once)");
  return undefined;
}

/** A single node as a branch: a one-node workflow named after the branch, ending at `done`. */
function nodeBranch(name: string, node: WorkflowNode): WorkflowDefinition {
  return {
    kind: "workflow",
    name: "branch",
    startAt: name,
    nodes: { [name]: node },
    includes: {},
    exits: [DEFAULT_EXIT],
    edges: { [name]: { to: DEFAULT_EXIT } },
    maxSteps: DEFAULT_MAX_STEPS,
  };
}

/** Without a projection of its own, a branch sees the parent scope's input. */
const parentInput = (ctx: { input: unknown }) => ctx.input;

export function branchScopeOf(name: string, value: unknown, problem: Check): BranchScope | undefined {
  const fields = recordOf(value);
  const titled = (t: unknown) => (typeof t === "string" ? t : name);
  if (fields?.kind === "include") {
    const workflow = fields.workflow;
    if (!isWorkflowDefinition(workflow)) {
      problem(`branch "${name}" must be built with includeWorkflow(child, { input })`);
      return undefined;
    }
    const title = titled(fields.title ?? workflow.title);
    return { name, title, definition: workflow, include: value as WorkflowInclude };
  }
  if (isWorkflowDefinition(value)) {
    const include: WorkflowInclude = { kind: "include", workflow: value, input: parentInput };
    return { name, title: titled(value.title), definition: value, include };
  }
  if (typeof fields?.kind === "string") {
    const definition = nodeBranch(name, value as WorkflowNode);
    const include: WorkflowInclude = { kind: "include", workflow: definition, input: parentInput };
    return { name, title: titled(fields.title), definition, include };
  }
  problem(`branch "${name}" must be a workflow, an includeWorkflow(...) or a node`);
  return undefined;
}

/** The branch scopes of a parallel node that compiled; what `compileParallel` accepted. */
export function branchScopesOf(f: Fields): BranchScope[] {
  const ignore = () => undefined;
  return Object.entries(recordOf(f.branches) ?? {}).flatMap(([name, value]) => {
    const branch = localNameProblem(name, "branch") === undefined && branchScopeOf(name, value, ignore);
    return branch ? [branch] : [];
  });
}

/**
 * Validates a parallel node and returns it compiled (each branch's start path is filled in once every
 * scope is collected), or undefined with the problems reported.
 */
export function compileParallel(
  f: Fields,
  base: ParallelPlace,
  problem: Check,
): CompiledParallelNode | undefined {
  const raw = recordOf(f.branches);
  if (raw === undefined) {
    problem("branches must be an object of branches by name");
    return undefined;
  }
  const entries = Object.entries(raw);
  if (entries.length === 0) problem("a parallel node needs at least one branch");
  const join = joinOf(f.join, Math.max(entries.length, 1), problem);
  const concurrency = concurrencyOf(f.concurrency, problem);
  const branches: BranchScope[] = [];
  for (const [name, value] of entries) {
    const invalid = localNameProblem(name, "branch");
    if (invalid !== undefined) {
      problem(invalid);
      continue;
    }
    const branch = branchScopeOf(name, value, problem);
    if (branch !== undefined) branches.push(branch);
  }
  if (join === undefined || concurrency === undefined || branches.length !== entries.length) return undefined;
  if (entries.length === 0) return undefined;
  return {
    kind: "parallel",
    ...base,
    join,
    concurrency,
    branches: branches.map((b) => ({
      name: b.name,
      title: b.title,
      scope: joinPath(base.path, b.name),
      startPath: "",
    })),
  };
}
