// Schema failures said without the value that failed: a saved or sent error must never quote input,
// and zod's own messages (and custom ones) may.

const MAX_ISSUES = 5;
const MAX_PATH_SEGMENT = 64;

function pathSegment(segment: unknown, first: boolean): string {
  if (typeof segment === "number") return `[${segment}]`;
  const text = typeof segment === "string" ? segment.slice(0, MAX_PATH_SEGMENT) : "(key)";
  return first ? text : `.${text}`;
}

function issuePath(path: unknown, root: string): string {
  if (!Array.isArray(path) || path.length === 0) return root;
  return path.map((segment, index) => pathSegment(segment, index === 0)).join("");
}

function numberText(value: unknown): string | undefined {
  return typeof value === "number" || typeof value === "bigint" ? String(value) : undefined;
}

/** Words from schema facts (expected type, limits, format), never zod's message, which may quote input. */
function issueKind(issue: Record<string, unknown>): string {
  const word = (value: unknown) =>
    typeof value === "string" && /^[\w-]{1,32}$/.test(value) ? value : undefined;
  switch (issue.code) {
    case "invalid_type":
      return word(issue.expected) ? `expected ${word(issue.expected)}` : "wrong type";
    case "too_big": {
      const limit = numberText(issue.maximum);
      return limit === undefined ? "too big" : `too big (at most ${limit})`;
    }
    case "too_small": {
      const limit = numberText(issue.minimum);
      return limit === undefined ? "too small" : `too small (at least ${limit})`;
    }
    case "invalid_format":
      return word(issue.format) ? `not a valid ${word(issue.format)}` : "invalid format";
    case "not_multiple_of":
      return "not a multiple of its step";
    case "unrecognized_keys":
      return Array.isArray(issue.keys) ? `${issue.keys.length} unrecognized key(s)` : "unrecognized keys";
    case "invalid_key":
      return "an invalid key";
    case "invalid_element":
      return "an invalid element";
    case "invalid_union":
      return "matches none of its options";
    case "invalid_value":
      return "not one of its allowed values";
    case "custom":
      return "failed a check";
    default:
      return "invalid";
  }
}

/**
 * Zod issues as field paths and schema words: `a.b: expected string; c[0]: too small (at least 1)`.
 * Object keys are reported (a record's keys are data, so keep secrets out of record keys); values,
 * zod's messages and custom messages never are.
 */
export function describeIssues(issues: readonly unknown[], root = "(root)"): string {
  const shown = issues.slice(0, MAX_ISSUES).map((raw) => {
    const issue = typeof raw === "object" && raw !== null ? (raw as Record<string, unknown>) : {};
    return `${issuePath(issue.path, root)}: ${issueKind(issue)}`;
  });
  const more = issues.length > MAX_ISSUES ? `; and ${issues.length - MAX_ISSUES} more` : "";
  return `${shown.join("; ") || "invalid"}${more}`;
}
