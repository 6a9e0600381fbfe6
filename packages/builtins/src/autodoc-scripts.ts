import { z } from "zod";

// What autodoc runs against the repository with shell nodes, and the pure parsing of what they print.

/** The diff the assessor and the verifier get inline; past this they read the files themselves. */
const DIFF_MAX_CHARS = 24_000;
/** Commits, changed files and candidate documents listed; a plan file read inline. */
const LIST_MAX = 200;
const PLAN_MAX_CHARS = 16_000;

// Marker lines between sections; git prints none of them (log lines start with a hash, status with a code).
const MARK = "::autodoc::";

/**
 * Run at the repository root with `<merge-base> [plan-path]`: the commits since the base, the changed
 * files (working tree included), the candidate documents, the plan file when there is one, the diff.
 */
export const GATHER = `mb=$1
plan=$2
echo "${MARK} log"
git log --no-color --format='%h %s' "$mb..HEAD" | head -n ${LIST_MAX}
echo "${MARK} files"
{ git diff --name-only "$mb"; git ls-files --others --exclude-standard; } | sort -u | head -n ${LIST_MAX}
echo "${MARK} documents"
git ls-files --cached --others --exclude-standard | grep -Ei '(^|/)(readme|changelog|changes|history|news|upgrading|migrating)[^/]*$|\\.(md|mdx|markdown|rst|adoc)$' | grep -v -E '(^|/)node_modules/' | head -n ${LIST_MAX}
echo "${MARK} plan"
case "$plan" in
  ""|/*|..|../*|*/../*|*/..) ;;
  *) [ -f "$plan" ] && head -c ${PLAN_MAX_CHARS} -- "$plan" ;;
esac
echo "${MARK} diff"
git diff --no-color --no-ext-diff "$mb" | head -c ${DIFF_MAX_CHARS + 1}`;

export interface Gathered {
  log: string[];
  files: string[];
  documents: string[];
  /** The plan file's text when `plan` named a file in the repository; null otherwise. */
  planFile: string | null;
  diff: string;
  diffTruncated: boolean;
}

export const gatheredSchema = z.object({
  log: z.array(z.string()),
  files: z.array(z.string()),
  documents: z.array(z.string()),
  planFile: z.string().nullable(),
  diff: z.string(),
  diffTruncated: z.boolean(),
});

const SECTIONS = ["log", "files", "documents", "plan", "diff"] as const;

/** GATHER's output, section by section; a marker inside the diff stays part of the diff. */
export function parseGathered(stdout: string): Gathered {
  const text: Record<(typeof SECTIONS)[number], string> = {
    log: "",
    files: "",
    documents: "",
    plan: "",
    diff: "",
  };
  let rest = stdout;
  for (let i = 0; i < SECTIONS.length; i++) {
    const name = SECTIONS[i] as (typeof SECTIONS)[number];
    const marker = `${MARK} ${name}\n`;
    const at = rest.indexOf(marker);
    if (at < 0) break;
    rest = rest.slice(at + marker.length);
    const next = SECTIONS[i + 1];
    const end = next === undefined ? -1 : rest.indexOf(`${MARK} ${next}\n`);
    text[name] = end < 0 ? rest : rest.slice(0, end);
    if (end >= 0) rest = rest.slice(end);
  }
  const lines = (value: string) => value.split("\n").filter((line) => line.trim() !== "");
  const truncated = text.diff.length > DIFF_MAX_CHARS;
  return {
    log: lines(text.log),
    files: lines(text.files),
    documents: lines(text.documents),
    planFile: text.plan.trim() === "" ? null : text.plan,
    diff: truncated ? text.diff.slice(0, DIFF_MAX_CHARS) : text.diff,
    diffTruncated: truncated,
  };
}

/**
 * Run at the repository root with `all|only` and file paths: one line `<sha256> <path>` per file,
 * `- <path>` for one that does not exist. `all` adds every file git shows as changed or new, so a
 * snapshot before and after a step shows what else it touched. sha256sum, else shasum, does the hash.
 */
export const DIGESTS = `scope=$1
shift
{
  if [ "$scope" = all ]; then git diff --name-only HEAD; git ls-files --others --exclude-standard; fi
  for f in "$@"; do printf '%s\\n' "$f"; done
} | sort -u | head -n ${LIST_MAX * 5} | while IFS= read -r f; do
  if [ -f "$f" ]; then
    if command -v sha256sum >/dev/null 2>&1; then d=$(sha256sum -- "$f" | cut -d' ' -f1); else d=$(shasum -a 256 -- "$f" | cut -d' ' -f1); fi
    printf '%s %s\\n' "$d" "$f"
  else
    printf -- '- %s\\n' "$f"
  fi
done`;

/** DIGESTS's lines as `path → sha256:<hex>`, or null for a missing file. */
export function parseDigests(stdout: string): Record<string, string | null> {
  const digests: Record<string, string | null> = {};
  for (const line of stdout.split("\n")) {
    const cut = line.indexOf(" ");
    if (cut < 0) continue;
    const digest = line.slice(0, cut);
    digests[line.slice(cut + 1)] = /^[0-9a-f]{64}$/.test(digest) ? `sha256:${digest}` : null;
  }
  return digests;
}

/** Run at the repository root with file paths: their diff against HEAD, new files included. */
export const DOC_DIFF = `{
  git diff --no-color --no-ext-diff HEAD -- "$@"
  for f in "$@"; do
    git ls-files --error-unmatch -- "$f" >/dev/null 2>&1 || { [ -f "$f" ] && git diff --no-color --no-index -- /dev/null "$f"; }
  done
} | head -c ${DIFF_MAX_CHARS + 1}`;

export function parseDiff(stdout: string): { text: string; truncated: boolean } {
  return stdout.length > DIFF_MAX_CHARS
    ? { text: stdout.slice(0, DIFF_MAX_CHARS), truncated: true }
    : { text: stdout, truncated: false };
}

/** Files whose digest differs between two DIGESTS maps (a file in only one of them counts). */
export function changedFiles(
  before: Record<string, string | null>,
  after: Record<string, string | null>,
): string[] {
  const paths = [...new Set([...Object.keys(before), ...Object.keys(after)])].sort();
  return paths.filter((path) => (before[path] ?? null) !== (after[path] ?? null));
}
