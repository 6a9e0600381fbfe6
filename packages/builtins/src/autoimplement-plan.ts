import { textDigest } from "piw";
import { z } from "zod";

// Finding, reading and digesting the plan autoimplement works from, and the documents it names.

/** The largest plan autoimplement reads: a plan is a page or two, not a log. */
const PLAN_MAX_BYTES = 256 * 1024;

/**
 * Reads the plan file `$1` (relative to the folder it runs in): prints `found\t<absolute path>` and
 * the text, or `missing` / `too_large`. Reads, never writes.
 */
export const READ_PLAN = `f=$1
if [ ! -f "$f" ]; then echo missing; exit 0; fi
size=$(wc -c < "$f" | tr -d ' ')
if [ "$size" -gt ${PLAN_MAX_BYTES} ]; then echo too_large; exit 0; fi
dir=$(cd "$(dirname "$f")" && pwd -P) || { echo missing; exit 0; }
printf 'found\\t%s/%s\\n' "$dir" "$(basename "$f")"
cat "$f"`;

export const planFileSchema = z.discriminatedUnion("status", [
  z.object({
    status: z.literal("found"),
    path: z.string(),
    digest: z.string(),
    text: z.string(),
    title: z.string(),
  }),
  z.object({ status: z.enum(["missing", "too_large", "none"]), asked: z.string() }),
]);
export type PlanFile = z.infer<typeof planFileSchema>;
export type FoundPlan = Extract<PlanFile, { status: "found" }>;

/** The plan's title: its first markdown heading, else its first line, else the task. */
function planTitle(text: string, fallback: string): string {
  const heading = /^#{1,3}\s+(.+)$/m.exec(text)?.[1]?.trim();
  const first = text.split("\n").find((line) => line.trim() !== "");
  const title = (heading ?? first ?? fallback).replace(/^#+\s*/, "").trim();
  return title.length <= 72 ? title : `${title.slice(0, 71)}…`;
}

/** READ_PLAN's report, digested. */
export function parsePlanFile(stdout: string, asked: string, task: string): PlanFile {
  const cut = stdout.indexOf("\n");
  const head = cut < 0 ? stdout.trim() : stdout.slice(0, cut);
  if (head === "missing" || head === "too_large") return { status: head, asked };
  const [status, path] = head.split("\t");
  if (status !== "found" || path === undefined) return { status: "missing", asked };
  const text = cut < 0 ? "" : stdout.slice(cut + 1);
  return { status: "found", path, digest: textDigest(text), text, title: planTitle(text, task) };
}

/**
 * The plan file the task names, when it names one: the `plan` input, or a task that is a single
 * path ending in `.md`. Empty when the task is a problem to plan first.
 */
export function askedPlan(task: string, plan: string | undefined): string {
  if (plan !== undefined) return plan.trim();
  const words = task.trim();
  return /^\S+\.md$/.test(words) ? words : "";
}

/** The markdown documents a plan names (`docs/x.md`, `README.md`), other than the plan itself, at most 20. */
export function namedDocuments(planText: string, planPath: string): string[] {
  const found = new Set<string>();
  for (const match of planText.matchAll(/(?:^|[\s`'"([])((?:\.\/)?[A-Za-z0-9_][A-Za-z0-9_./-]*\.md)\b/g)) {
    const path = (match[1] ?? "").replace(/^\.\//, "");
    if (path === "" || path.split("/").includes("..") || planPath.endsWith(`/${path}`)) continue;
    found.add(path);
  }
  return [...found].slice(0, 20);
}

/** Prints each of its arguments that is a file in the folder it runs in, one a line. */
export const EXISTING_FILES = `for f in "$@"; do [ -f "$f" ] && printf '%s\\n' "$f"; done; exit 0`;
