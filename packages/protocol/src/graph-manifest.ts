import { z } from "zod";
import { answeredBySchema } from "./answer-check.js";
import { nodePathSchema } from "./ids.js";
import { nodeKindSchema } from "./run-records.js";

/**
 * Where a manifest edge leads: a node by full path, an exit of the root workflow, or the join of the
 * parallel node at `path` (an edge that ends one of its branches).
 */
const manifestTargetSchema = z.discriminatedUnion("kind", [
  z.object({ kind: z.literal("node"), path: nodePathSchema }),
  z.object({ kind: z.literal("exit"), exit: z.string().min(1) }),
  z.object({ kind: z.literal("join"), path: nodePathSchema }),
]);

/** When a parallel node's join is satisfied: every branch, the first one, or at least `count` of them. */
const joinPolicySchema = z.discriminatedUnion("kind", [
  z.object({ kind: z.literal("all") }),
  z.object({ kind: z.literal("any") }),
  z.object({ kind: z.literal("atLeast"), count: z.number().int().positive() }),
]);

/**
 * One parallel node: its branches start at `startPath` (the fork-to-branch edges are not in `edges`),
 * their last edges lead to `{ kind: "join", path }`, and the node's own edges are where the run goes
 * after the join. `concurrency` null means every branch at once.
 *
 * A map node (`map: true`) has one branch, named `each`: the template of the branch it runs once per
 * item of its list. Its visits have the paths `<map>/<index>/...`; a run view lists the items of its
 * saved list, and any branch that ran, as `0`, `1`, ... in place of the template
 * (instantiateMapBranches).
 */
const manifestForkSchema = z.object({
  path: nodePathSchema,
  join: joinPolicySchema,
  concurrency: z.number().int().positive().nullable(),
  branches: z.array(z.object({ name: z.string().min(1), title: z.string(), startPath: nodePathSchema })),
  map: z.literal(true).optional(),
});

/**
 * The compiled graph as plain JSON: the host stores it with the run and viewers render it without
 * loading workflow code. Edges are resolved to full paths; `via` lists the include exits an edge passes
 * through (`design.ready`), so a viewer can still draw the mount boundary.
 */
export const graphManifestSchema = z.object({
  version: z.literal(1),
  workflow: z.string().min(1),
  title: z.string().optional(),
  startPath: nodePathSchema,
  exits: z.array(z.string().min(1)),
  maxSteps: z.number().int().positive(),
  nodes: z.array(
    z.object({
      path: nodePathSchema,
      name: z.string().min(1),
      scope: z.string(),
      kind: nodeKindSchema,
      title: z.string(),
      /** Checkpoints only: who may answer it. */
      answeredBy: answeredBySchema.optional(),
    }),
  ),
  mounts: z.array(
    z.object({
      path: nodePathSchema,
      name: z.string().min(1),
      scope: z.string(),
      workflow: z.string().min(1),
      title: z.string(),
      startPath: nodePathSchema,
      exits: z.array(z.string().min(1)),
    }),
  ),
  edges: z.array(
    z.object({
      from: nodePathSchema,
      to: manifestTargetSchema,
      label: z.string().optional(),
      via: z.array(z.string()).optional(),
    }),
  ),
  /** Parallel nodes; absent when the workflow has none. Branch nodes have scope `<fork>/<branch>`. */
  forks: z.array(manifestForkSchema).optional(),
});

export type GraphManifest = z.infer<typeof graphManifestSchema>;
export type ManifestTarget = z.infer<typeof manifestTargetSchema>;
export type ManifestFork = z.infer<typeof manifestForkSchema>;
export type JoinPolicy = z.infer<typeof joinPolicySchema>;
