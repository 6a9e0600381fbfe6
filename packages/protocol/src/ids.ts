import { z } from "zod";
import { NODE_PATH, OPAQUE_ID, RUN_ID } from "./id-patterns.js";

/** Run IDs look like `<workflow>-<time>-<random>`; the host allocates them. */
export const runIdSchema = z
  .string()
  .min(1)
  .max(RUN_ID.maxLength)
  .regex(RUN_ID.pattern, "run IDs use letters, digits, '.', '_' and '-'");

/** A compiled node path such as `documentation/workspace/inspect`. */
export const nodePathSchema = z
  .string()
  .min(1)
  .max(NODE_PATH.maxLength)
  .regex(NODE_PATH.pattern, "node paths are '/'-joined node names");

/** Opaque IDs (turns, messages, launches, claim tokens, sessions): printable, bounded. */
export const opaqueIdSchema = z
  .string()
  .min(1)
  .max(OPAQUE_ID.maxLength)
  .regex(OPAQUE_ID.pattern, "IDs are printable ASCII without spaces");

/**
 * A client's name for one user action that creates a run (start, answer, restart): 128 random bits as
 * 32 lowercase hex digits, chosen once per action. The host saves it with the run, so a request sent
 * again after a lost reply finds the run it already made instead of making another.
 */
export const requestKeySchema = z
  .string()
  .regex(/^[0-9a-f]{32}$/, "request keys are 32 lowercase hex digits (128 random bits)");
export type RequestKey = z.infer<typeof requestKeySchema>;

export const visitNumberSchema = z.number().int().min(1).max(1_000_000);
export const generationSchema = z.number().int().min(0);
export const revisionSchema = z.number().int().min(0);

/** Any JSON value; workflow inputs, outputs and answers are JSON. */
export const jsonValueSchema = z.json();
export type JsonValue = z.infer<typeof jsonValueSchema>;

/**
 * A new final run ID, `<workflow>-<base36 time>-<8 hex>`: the one place that names runs (the host and
 * the embedded runtime both call it). Workflow names already use run-ID characters; anything else is
 * replaced, so the ID always matches `runIdSchema`.
 */
export function newRunId(workflowName: string, now: number = Date.now()): string {
  let name = workflowName.replace(/[^A-Za-z0-9_-]/g, "-").slice(0, 120);
  if (!/^[A-Za-z0-9]/.test(name)) name = `run${name}`;
  const random = crypto.getRandomValues(new Uint8Array(4));
  let hex = "";
  for (const byte of random) hex += byte.toString(16).padStart(2, "0");
  return `${name}-${now.toString(36)}-${hex}`;
}
