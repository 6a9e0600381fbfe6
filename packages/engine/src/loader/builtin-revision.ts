import type { WorkflowDefinition } from "../authoring/define-workflow.js";
import { compileWorkflow } from "../compiler/compile-workflow.js";
import { isZodSchema } from "../compiler/compile-node.js";
import { schemaJson, sha256Hex } from "../compiler/definition-digest.js";

/**
 * A built-in's revision: a hash of its compiled digest, of every value of its definition the digest
 * leaves out (titles, summary, string prompts, system prompts, `textInput`), and of `source`, the digest
 * of the source files it was built from. A built-in has no file whose bytes a resumed run could
 * compare, so this stands in for them: resuming a run of another revision needs `--accept-changes`.
 * Functions count by where they are, not by their text (the same code reads differently in the bundle,
 * under tsx and under vitest, and the preflight child and the worker must agree): a change inside a
 * prompt builder reaches the revision through `source`.
 */
export function builtinRevision(definition: WorkflowDefinition, source = ""): string {
  const { digest } = compileWorkflow(definition);
  return sha256Hex(`${digest}\n${definitionText(definition, new Set())}\n${source}`).slice(0, 16);
}

/** A canonical text of a definition's value tree; schemas by what they accept. */
function definitionText(value: unknown, seen: Set<object>): string {
  if (typeof value === "function") return "(fn)";
  if (typeof value !== "object" || value === null) return JSON.stringify(value) ?? String(value);
  if (isZodSchema(value)) return `schema:${JSON.stringify(schemaJson(value))}`;
  // A value met again (a child workflow mounted twice) adds nothing new; a cycle must not recurse.
  if (seen.has(value)) return "(seen)";
  seen.add(value);
  if (Array.isArray(value)) return `[${value.map((item) => definitionText(item, seen)).join(",")}]`;
  const keys = Object.keys(value).sort();
  const record = value as Record<string, unknown>;
  return `{${keys.map((key) => `${JSON.stringify(key)}:${definitionText(record[key], seen)}`).join(",")}}`;
}
