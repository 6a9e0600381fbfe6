import type { PreflightReply } from "./preflight.js";
import {
  budget,
  bool,
  list,
  isRecord,
  object,
  oneOf,
  optional,
  required,
  text,
  variants,
} from "./run-summary-check.js";

/**
 * A check of a prepared launch's preflight reply that needs no zod, for a launch the launch cache
 * answers: `piw run` of an unchanged workflow file then builds none of the preflight's schemas. It
 * checks every field by the rules of `preflightReplySchema` and refuses whatever it does not know (an
 * unknown key, any other reply), so the caller parses with the schema instead. Anything accepted here
 * the schema accepts too, unchanged (packages/protocol/test/preflight-check.test.ts holds both to that).
 */

/** A JSON value as `z.json()` takes it; one nested deeper than this is left to the schema. */
const json = (value: unknown, depth = 0): boolean => {
  if (value === null || typeof value === "string" || typeof value === "boolean") return true;
  if (typeof value === "number") return Number.isFinite(value);
  if (depth > 200 || typeof value !== "object") return false;
  if (Array.isArray(value)) return value.every((item) => json(item, depth + 1));
  return Object.values(value).every((item) => json(item, depth + 1));
};
const sha256 = text(64, 64, /^[0-9a-f]{64}$/);

const source = variants("kind", {
  file: { path: required(text(1, 4096)), sha256: required(sha256) },
  builtin: { id: required(text(1, 200)), revision: required(text(1, 200)) },
});

const launch = object({
  workflowName: required(text(1, 200)),
  source: required(source),
  definitionDigest: required(text(1, 200)),
  manifest: required((value) => json(value)),
  input: required((value) => json(value)),
  presentationInstructions: optional(text(0, 64 * 1024)),
  requestKey: optional(text(32, 32, /^[0-9a-f]{32}$/)),
  budget: optional(budget),
  notifyModel: required(object({ onFailure: required(bool), onCancel: required(bool) })),
  title: optional(text()),
  notes: required(list(text())),
  agentSteps: required(list(text(0, 4096))),
});

const prepared = object({
  type: required(oneOf("launch.prepared")),
  requestId: required(text(1, 100)),
  launch: required(launch),
  sources: optional(list(object({ path: required(text(1, 4096)), sha256: required(sha256) }), 500)),
});

/** The reply when it is a prepared launch the quick check takes; undefined for anything else. */
export function quickPreparedLaunch(
  raw: unknown,
): Extract<PreflightReply, { type: "launch.prepared" }> | undefined {
  return isRecord(raw) && prepared(raw)
    ? (raw as Extract<PreflightReply, { type: "launch.prepared" }>)
    : undefined;
}
