/**
 * The spelling of piw's IDs, once and without zod: the zod schemas (ids.ts) and the quick run-list
 * check (run-summary-check.ts) both take them from here, so the two cannot disagree.
 */
export interface IdPattern {
  readonly pattern: RegExp;
  readonly maxLength: number;
}

/** Run IDs: letters, digits, '.', '_' and '-', starting with a letter or digit. */
export const RUN_ID: IdPattern = { pattern: /^[A-Za-z0-9][A-Za-z0-9._-]*$/, maxLength: 200 };

/** A compiled node path such as `documentation/workspace/inspect`: '/'-joined node names. */
export const NODE_PATH: IdPattern = { pattern: /^[A-Za-z0-9_-]+(\/[A-Za-z0-9_-]+)*$/, maxLength: 500 };

/** Opaque IDs (turns, messages, launches, claim tokens, sessions): printable ASCII without spaces. */
export const OPAQUE_ID: IdPattern = { pattern: /^[\x21-\x7e]+$/, maxLength: 300 };
