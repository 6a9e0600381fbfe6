import type { WorkflowDefinition } from "../authoring/define-workflow.js";
import { compileWorkflow } from "../compiler/compile-workflow.js";
import { isZodSchema } from "../compiler/compile-node.js";
import { schemaJson, sha256Hex } from "../compiler/definition-digest.js";

/**
 * A built-in's revision: a hash of its compiled digest and of everything the digest leaves out (the
 * code of its prompts, parsers and routes, its title and summary). A built-in has no file whose bytes a
 * resumed run could compare, so this stands in for them: any change to the definition changes it, and
 * resuming a run of an older revision then needs `--accept-changes`.
 */
export function builtinRevision(definition: WorkflowDefinition): string {
  const { digest } = compileWorkflow(definition);
  return sha256Hex(`${digest}\n${definitionText(definition, new Set())}`).slice(0, 16);
}

/** A canonical text of a definition's value tree; functions by their source, schemas by what they accept. */
function definitionText(value: unknown, seen: Set<object>): string {
  if (typeof value === "function") return `fn:${value.toString()}`;
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
