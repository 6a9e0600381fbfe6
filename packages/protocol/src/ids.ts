import { z } from "zod";

/** Run IDs look like `<workflow>-<time>-<random>`; the host allocates them. */
export const runIdSchema = z
  .string()
  .min(1)
  .max(200)
  .regex(/^[A-Za-z0-9][A-Za-z0-9._-]*$/, "run IDs use letters, digits, '.', '_' and '-'");
export type RunId = z.infer<typeof runIdSchema>;

/** A compiled node path such as `documentation/workspace/inspect`. */
export const nodePathSchema = z
  .string()
  .min(1)
  .max(500)
  .regex(/^[A-Za-z0-9_-]+(\/[A-Za-z0-9_-]+)*$/, "node paths are '/'-joined node names");
export type NodePath = z.infer<typeof nodePathSchema>;

/** Opaque IDs (turns, messages, launches, claim tokens, sessions): printable, bounded. */
export const opaqueIdSchema = z
  .string()
  .min(1)
  .max(300)
  .regex(/^[\x21-\x7e]+$/, "IDs are printable ASCII without spaces");

export const visitNumberSchema = z.number().int().min(1).max(1_000_000);
export const generationSchema = z.number().int().min(0);
export const revisionSchema = z.number().int().min(0);

/** Any JSON value; workflow inputs, outputs and answers are JSON. */
export const jsonValueSchema = z.json();
export type JsonValue = z.infer<typeof jsonValueSchema>;
