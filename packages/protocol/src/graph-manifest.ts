import { z } from "zod";
import { answeredBySchema } from "./answer-check.js";
import { nodePathSchema } from "./ids.js";
import { nodeKindSchema } from "./run-records.js";

/** Where a manifest edge leads: a node by full path, or an exit of the root workflow. */
const manifestTargetSchema = z.discriminatedUnion("kind", [
  z.object({ kind: z.literal("node"), path: nodePathSchema }),
  z.object({ kind: z.literal("exit"), exit: z.string().min(1) }),
]);

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
});

export type GraphManifest = z.infer<typeof graphManifestSchema>;
export type ManifestTarget = z.infer<typeof manifestTargetSchema>;
