import { z } from "zod";
import {
  action,
  agent,
  compute,
  decision,
  decisionEdge,
  defineWorkflow,
  includeWorkflow,
  type NodeContext,
  type ScopeContext,
} from "../src/index.js";

/** The execution-identity rule's child: prepares a workspace; mounted twice below. */
const workspace = defineWorkflow({
  name: "workspace",
  input: z.object({ dir: z.string() }),
  startAt: "inspect",
  exits: ["ready", "broken"],
  nodes: {
    inspect: action({
      run: ({ input, effects }: import("../src/index.js").ActionContext<{ dir: string }>) =>
        effects.idempotent("workspace.inspect", { dir: input.dir }, () => ({ clean: true })),
    }),
  },
  edges: {
    inspect: { to: ["ready", "broken"], route: (out) => (out.clean ? "ready" : "broken") },
  },
});

/** Includes the workspace again, so its node appears at `documentation/workspace/inspect`. */
const documentation = defineWorkflow({
  name: "documentation",
  input: z.object({ topic: z.string() }),
  startAt: "workspace",
  exits: ["written"],
  nodes: {
    write: agent({
      prompt: ({ input }: NodeContext<{ topic: string }>) => `Document ${input.topic}`,
      output: z.object({ pages: z.number() }),
    }),
  },
  includes: {
    workspace: includeWorkflow(workspace, {
      input: ({ input }: ScopeContext<{ topic: string }>) => ({ dir: `docs/${input.topic}` }),
    }),
  },
  edges: {
    "workspace.ready": { to: "write" },
    "workspace.broken": { to: "written" },
    write: { to: "written" },
  },
});

/** The root of the identity collision: the workspace directly, and again inside documentation. */
export const release = defineWorkflow({
  name: "release",
  input: z.object({ repo: z.string() }),
  startAt: "workspace",
  exits: ["shipped", "failed"],
  nodes: {
    review: decision({ choices: ["ship", "redo", "stop"], decide: () => "ship" }),
    count: compute({ run: ({ outputs }) => Object.keys(outputs).length }),
  },
  includes: {
    workspace: includeWorkflow(workspace, {
      input: ({ input }: ScopeContext<{ repo: string }>) => ({ dir: input.repo }),
    }),
    documentation: includeWorkflow(documentation, { input: { topic: "api" } }),
  },
  edges: {
    "workspace.ready": { to: "documentation" },
    "workspace.broken": { to: "failed" },
    "documentation.written": { to: "review" },
    review: decisionEdge({ ship: "count", redo: "workspace", stop: "failed" }),
    count: { to: "shipped" },
  },
});
