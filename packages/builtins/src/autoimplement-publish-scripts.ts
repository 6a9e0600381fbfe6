import { WorkflowError } from "piw";
import { z } from "zod";

// The commands autoimplement's publish step runs through `gh` and git, and what they print parsed.
// gh's and git's own words (stderr) can quote remotes, tokens' scopes and URLs, so no failure here
// ever carries them: each says what failed in our words.

/** Prints `ok`, `missing` (no gh on PATH) or `unauthenticated` (`gh auth status` fails). */
export const GH_READY = `command -v gh >/dev/null 2>&1 || { echo missing; exit 0; }
if gh auth status >/dev/null 2>&1; then echo ok; else echo unauthenticated; fi`;

export const ghReadySchema = z.enum(["ok", "missing", "unauthenticated"]);

export function parseGhReady(stdout: string): z.infer<typeof ghReadySchema> {
  const found = ghReadySchema.safeParse(stdout.trim());
  return found.success ? found.data : "unauthenticated";
}

/** How many lines of a failing check's log the fix step sees, and how long each may be. */
const LOG_LINES = 80;
const LOG_LINE_CHARS = 300;
/** The most failing checks whose logs are fetched. */
export const MAX_LOGGED_CHECKS = 5;
/** A bound on one check's log tail as the fix step gets it. */
const MAX_LOG_CHARS = 6000;

/**
 * For each `<name> <run id>` pair: the tail of that Actions run's failed-step log, between marker
 * lines. A check that is not an Actions run (no run id) gets an empty log.
 */
export const FAILED_LOGS = `while [ "$#" -ge 2 ]; do
  printf '\\036check %s\\n' "$1"
  if [ -n "$2" ]; then gh run view "$2" --log-failed 2>/dev/null | tail -n ${LOG_LINES} | cut -c1-${LOG_LINE_CHARS}; fi
  shift 2
done`;

export const checkLogSchema = z.object({ name: z.string(), log: z.string() });
export type CheckLog = z.infer<typeof checkLogSchema>;

export function parseFailedLogs(stdout: string): CheckLog[] {
  return stdout
    .split("\u001echeck ")
    .slice(1)
    .map((part) => {
      const cut = part.indexOf("\n");
      const name = cut < 0 ? part : part.slice(0, cut);
      const log = cut < 0 ? "" : part.slice(cut + 1).trimEnd();
      return { name: name.slice(0, 200), log: log.length > MAX_LOG_CHARS ? log.slice(-MAX_LOG_CHARS) : log };
    });
}

/** One check of the PR as `gh pr checks --json name,bucket,link` reports it. */
const ghCheckSchema = z.object({
  name: z.string(),
  bucket: z.string(),
  link: z.string().optional().default(""),
});

const checkSchema = z.object({
  name: z.string(),
  bucket: z.enum(["pass", "fail", "pending", "skipping", "cancel"]),
  link: z.string(),
});
type Check = z.infer<typeof checkSchema>;

/** The PR's checks at one poll: failing when any failed, else pending when any is, else passing. */
export const checksSchema = z.object({
  state: z.enum(["passing", "pending", "failing", "none"]),
  checks: z.array(checkSchema),
});
export type Checks = z.infer<typeof checksSchema>;

/** The fields `gh pr checks --json` is asked for. */
export const CHECK_FIELDS = "name,bucket,link";

const BUCKETS = new Set<string>(["pass", "fail", "pending", "skipping", "cancel"]);

/**
 * `gh pr checks --json` exits 0 (passing), 8 (pending) or 1 (failing, or no checks at all); a
 * repository with no CI reports none, which counts as nothing failing.
 */
export function parseChecks(report: { exitCode: number; stdout: string; stderr: string }): Checks {
  if (report.stdout.trim() === "") {
    if (/no checks reported/i.test(report.stderr)) return { state: "none", checks: [] };
    throw new WorkflowError("gh pr checks printed neither checks nor why there are none.");
  }
  const parsed = z.array(ghCheckSchema).max(500).parse(JSON.parse(report.stdout));
  const checks = parsed.map((check) => ({
    name: check.name.slice(0, 200),
    // An unknown bucket is treated as still running: never as passed.
    bucket: (BUCKETS.has(check.bucket) ? check.bucket : "pending") as Check["bucket"],
    link: check.link.slice(0, 500),
  }));
  if (checks.length === 0) return { state: "none", checks };
  const state = checks.some((c) => c.bucket === "fail" || c.bucket === "cancel")
    ? "failing"
    : checks.some((c) => c.bucket === "pending")
      ? "pending"
      : "passing";
  return { state, checks };
}

/** The Actions run a check's link points at (`.../actions/runs/<id>/job/<job>`); "" for another CI. */
export function actionsRunId(link: string): string {
  return /\/actions\/runs\/(\d+)/.exec(link)?.[1] ?? "";
}

export const prSchema = z.object({
  number: z.number().int().positive(),
  url: z.string(),
  /** True when the PR was already open for this branch and base (opened earlier, or by a crashed attempt). */
  reused: z.boolean(),
});
export type PullRequest = z.infer<typeof prSchema>;

/** `gh pr list --json number,url`: the open PR of the branch, if any. */
export function parseOpenPr(stdout: string): { number: number; url: string } | null {
  const list = z
    .array(z.object({ number: z.number().int().positive(), url: z.string() }))
    .parse(JSON.parse(stdout === "" ? "[]" : stdout));
  return list[0] ?? null;
}

/** The PR number in the URL `gh pr create` prints (`https://github.com/o/r/pull/12`). */
export function prNumberOf(url: string): number | null {
  const found = /\/pull\/(\d+)\s*$/.exec(url.trim());
  return found?.[1] === undefined ? null : Number(found[1]);
}

export const pushSchema = z.object({
  remote: z.string(),
  branch: z.string(),
  commit: z.string(),
  /** The repository root, which the fix step is told to work in. */
  root: z.string(),
  /** 0 for the first push, then the fix round that made the commit. */
  round: z.number().int().min(0),
});

export const commitSchema = z.object({ commit: z.string(), committed: z.boolean(), round: z.number() });
