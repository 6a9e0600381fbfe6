import { randomUUID } from "node:crypto";
import { join } from "node:path";
import type { WorkflowDescription } from "@piw/protocol";
import { LaunchRefused } from "../launch/launch-refused.js";
import { listWorkflowFiles } from "../launch/prepare-launch.js";
import { WORKFLOW_FILE_SUFFIX } from "../loader/load-workflow-file.js";
import { workflowSearchDirs } from "../loader/resolve-workflow.js";
import { crashed, evaluatePreflight, type PreflightOptions, refusalFor } from "./evaluate-preflight.js";

/** Where a workflow one can start by name comes from. */
export type WorkflowOrigin = { kind: "project" | "global"; path: string } | { kind: "builtin"; path: null };

/** One workflow a name starts here: what it is, or why it cannot be started. */
export type StartableWorkflow = {
  name: string;
  origin: WorkflowOrigin;
} & ({ kind: "described"; workflow: WorkflowDescription } | { kind: "refused"; refusal: LaunchRefused });

/**
 * The workflows a name starts from `cwd`, found as `resolveWorkflow` finds them (project
 * `.pi/workflows/`, then the agent folder's `workflows/`, then the built-ins; a name found first
 * shadows the later ones), each file described in its own preflight child and the built-ins together
 * in one, so no workflow code runs here.
 */
export async function describeStartableWorkflows(
  cwd: string,
  options: PreflightOptions,
): Promise<StartableWorkflow[]> {
  const [projectDir] = workflowSearchDirs({ cwd });
  const found: Array<{ name: string; ref: string; origin: WorkflowOrigin }> = [];
  for (const { name, dir } of listWorkflowFiles(cwd)) {
    const path = join(dir, `${name}${WORKFLOW_FILE_SUFFIX}`);
    found.push({ name, ref: path, origin: { kind: dir === projectDir ? "project" : "global", path } });
  }
  const described: StartableWorkflow[] = [];
  // One child at a time: a machine with few cores is not worth flooding for a listing.
  for (const entry of found) {
    const outcome = await describeOne(entry.ref, cwd, options);
    described.push({ name: entry.name, origin: entry.origin, ...outcome });
  }
  const builtin = { kind: "builtin", path: null } as const;
  for (const workflow of await describeBuiltins(cwd, options)) {
    if (found.some((entry) => entry.name === workflow.name)) continue;
    described.push({ name: workflow.name, origin: builtin, kind: "described", workflow });
  }
  return described;
}

/**
 * The built-ins, described by one preflight child (they are registered there and in the worker, never
 * in the CLI or Pi). Without a child to ask, there are none to list: starting one would fail the same way.
 */
export async function describeBuiltins(
  cwd: string,
  options: PreflightOptions,
): Promise<WorkflowDescription[]> {
  const outcome = await evaluatePreflight({ type: "builtins", requestId: randomUUID(), cwd }, options);
  if (outcome.kind !== "replied" || outcome.reply.type !== "builtins.described") return [];
  return outcome.reply.workflows;
}

async function describeOne(
  ref: string,
  cwd: string,
  options: PreflightOptions,
): Promise<
  { kind: "described"; workflow: WorkflowDescription } | { kind: "refused"; refusal: LaunchRefused }
> {
  const what = `workflow ${ref}`;
  const outcome = await evaluatePreflight({ type: "describe", requestId: randomUUID(), ref, cwd }, options);
  if (outcome.kind !== "replied") return { kind: "refused", refusal: refusalFor(outcome, what) };
  const { reply } = outcome;
  switch (reply.type) {
    case "described":
      return { kind: "described", workflow: reply.workflow };
    case "refused": {
      const { code, message, problems, usage } = reply.refusal;
      return { kind: "refused", refusal: new LaunchRefused(code, message, problems, usage) };
    }
    case "crashed":
      return { kind: "refused", refusal: crashed(what) };
    case "launch.prepared":
    case "builtins.described":
      return { kind: "refused", refusal: refusalFor({ kind: "reply_invalid" }, what) };
    default:
      return reply satisfies never;
  }
}
