import { z } from "zod";

/**
 * Stable codes for errors that are saved or cross a process boundary.
 * Launch codes come from the launch rules; the rest name the other ways a run can end badly.
 */
export const errorCodeSchema = z.enum([
  // Launch (the launch preflight and one-follow-up rules)
  "workflow_not_found", // the name or path resolves to no workflow file
  "workflow_invalid", // the workflow file fails to load or compile
  "input_invalid", // the input does not match the workflow's input schema
  "answer_invalid", // a continuation's checkpoint answer failed the checkpoint's schema; the checkpoint stays open
  "workflow_exited_at_load", // the workflow's code ended its preflight process before the load finished
  "workflow_crashed_at_load", // the workflow's code threw outside its import while it was loaded
  "workflow_load_timeout", // loading the workflow took longer than the preflight time limit
  "preflight_failed", // the preflight process could not start or sent no valid reply
  "source_changed", // the source or definition digest differs from the one the run was prepared with
  "store_unavailable", // the state database could not be opened or written
  "activation_failed", // the worker could not be started or died before it reported
  "cancelled", // the run was cancelled by a user
  // Execution
  "node_failed", // a node's code threw or its command exited non-zero
  "node_timed_out", // a node ran past its timeout
  "output_invalid", // a node's output failed its schema
  "output_too_large", // a node's output, effect value or message broke the size or nesting limit of a frame
  "max_steps_exceeded", // a loop ran past the workflow's maxSteps
  "effect_conflict", // one effect identity was reused with another request
  "map_items_invalid", // a map node's list is not an array of JSON values, or its JSON is too large
  "map_too_many_items", // a map node's list is longer than its maxItems
  "map_too_few_items", // a map node's list is shorter than its join "any" or { atLeast } needs
  "map_item_invalid", // an item of a map node's list does not match its branch's input schema
  "workspace_unavailable", // a workspace block found no git repository, no git, or no such base ref
  "workspace_dirty", // a workspace block found uncommitted changes to tracked files and made nothing
  "workspace_conflict", // a workspace block's branch or worktree exists but another request made it
  "pi_sdk_missing", // an isolated agent step found no Pi SDK to open its session with
  "model_unavailable", // no usable model: none configured, one Pi does not know, or the provider refused it for good (credentials, quota)
  "worker_failed", // a worker reported a failure outside any node
  "internal_error", // a bug in piw; the message says where to report it
]);
export type ErrorCode = z.infer<typeof errorCodeSchema>;

/** The byte limit on every persisted or transmitted error message. */
export const SAFE_MESSAGE_MAX_BYTES = 512;

const encoder = new TextEncoder();

function utf8Length(text: string): number {
  return encoder.encode(text).byteLength;
}

export const safeErrorSchema = z.object({
  code: errorCodeSchema,
  message: z
    .string()
    .refine(
      (text) => utf8Length(text) <= SAFE_MESSAGE_MAX_BYTES,
      `at most ${SAFE_MESSAGE_MAX_BYTES} bytes of UTF-8`,
    ),
});
export type SafeError = z.infer<typeof safeErrorSchema>;

const ELLIPSIS = "…";

/**
 * Bound a message for storage: no control characters, at most SAFE_MESSAGE_MAX_BYTES of UTF-8.
 * Callers decide what is safe to say; this only makes sure it stays small and printable.
 */
export function boundSafeMessage(text: string, maxBytes: number = SAFE_MESSAGE_MAX_BYTES): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: stripping control characters is the point.
  const flat = text.replace(/[\u0000-\u001f\u007f]+/g, " ").trim();
  if (utf8Length(flat) <= maxBytes) return flat;
  const budget = maxBytes - utf8Length(ELLIPSIS);
  let out = "";
  let used = 0;
  for (const ch of flat) {
    const size = utf8Length(ch);
    if (used + size > budget) break;
    out += ch;
    used += size;
  }
  return out + ELLIPSIS;
}

export function safeError(code: ErrorCode, message: string): SafeError {
  return { code, message: boundSafeMessage(message) };
}

/**
 * `text` closed as one sentence: a period is added unless it already ends in `.`, `!`, `?` or `…`,
 * so a message that ends in a period never gets a second one when quoted in another.
 */
export function asSentence(text: string): string {
  const trimmed = text.trimEnd();
  return /[.!?…]$/.test(trimmed) ? trimmed : `${trimmed}.`;
}
