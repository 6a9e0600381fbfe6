import { type NodeContext, shell, WorkflowError } from "piw";
import { z } from "zod";

// Shell scripts the built-ins run against the user's repository, and what they print parsed.

// Prints one tab-separated line: `ok <how> <ref> <sha> <merge-base> <root>`, or `error <reason>`.
const RESOLVE_BASE = `root=$(git rev-parse --show-toplevel 2>/dev/null) || { echo "error not_a_repository"; exit 0; }
cd "$root" || exit 1
git rev-parse --verify --quiet HEAD >/dev/null || { echo "error no_commits"; exit 0; }
try() {
  sha=$(git rev-parse --verify --quiet "$2^{commit}" 2>/dev/null) || return 0
  mb=$(git merge-base HEAD "$sha" 2>/dev/null) || mb=$sha
  printf 'ok\\t%s\\t%s\\t%s\\t%s\\t%s\\n' "$1" "$2" "$sha" "$mb" "$root"
  exit 0
}
if [ -n "$1" ]; then try given "$1"; echo "error unknown_base"; exit 0; fi
try upstream '@{upstream}'
try origin_head origin/HEAD
try parent 'HEAD^'
echo "error no_base"`;

// For each `<file> <line>` pair: `yes` when the file is inside the repository and has that line.
export const CHECK_LINES = `cd "$1" || exit 1
shift
while [ "$#" -ge 2 ]; do
  f=$1; l=$2; shift 2
  case "$f" in /*|..|../*|*/../*|*/..) echo no; continue ;; esac
  if [ -f "$f" ] && [ "$(awk 'END { print NR }' "$f")" -ge "$l" ]; then echo yes; else echo no; fi
done`;

// A ref as git spells one; never an option (a leading `-`), since it is passed to git as an argument.
export const refSchema = z
  .string()
  .min(1)
  .max(200)
  .regex(/^[A-Za-z0-9_./@{}^~][A-Za-z0-9_./@{}^~-]*$/, "a git ref such as main, origin/main or HEAD~3");

export const baseSchema = z.object({
  how: z.enum(["given", "upstream", "origin_head", "parent"]),
  ref: z.string(),
  sha: z.string(),
  mergeBase: z.string(),
  root: z.string(),
});
export type Base = z.infer<typeof baseSchema>;

/** RESOLVE_BASE's line: the base, or the reason (`not_a_repository`, `no_base`, …) there is none. */
function parseBase(stdout: string): { ok: true; base: Base } | { ok: false; reason: string } {
  const [status, ...fields] = stdout.trim().split("\t");
  if (status !== "ok") return { ok: false, reason: stdout.trim().split(" ")[1] ?? "" };
  const [how, ref, sha, mergeBase, root] = fields;
  return { ok: true, base: baseSchema.parse({ how, ref, sha, mergeBase, root }) };
}

/**
 * The "Find the base" node: `input.base`, else the upstream, origin/HEAD or HEAD^, as a Base; a
 * workflow-named error when there is none.
 */
export function findBaseNode<I extends { base?: string | undefined }>(workflow: string) {
  const problems: Record<string, string> = {
    not_a_repository: `${workflow} needs a git repository: run it inside one.`,
    no_commits: `${workflow} needs a repository with at least one commit.`,
    unknown_base: "The base given is not a commit in this repository.",
    no_base: "No base to compare with: no upstream, no origin/HEAD and no parent commit. Give one as base.",
  };
  return shell({
    title: "Find the base",
    exec: ({ input }: NodeContext<I>) => ["sh", "-c", RESOLVE_BASE, workflow, input.base ?? ""],
    parse: ({ stdout }): Base => {
      const found = parseBase(stdout);
      if (found.ok) return found.base;
      throw new WorkflowError(
        problems[found.reason] ?? `${workflow} could not find the base to compare with.`,
      );
    },
    timeoutMs: 60_000,
  });
}

/** Answers of CHECK_LINES, in the order of its pairs. */
export function parseCheckLines(stdout: string): boolean[] {
  return stdout
    .split("\n")
    .filter(Boolean)
    .map((answer) => answer === "yes");
}

/** A path as a model may write it, made relative to the repository root; null if outside. */
export function repoPath(file: string, root: string): string | null {
  let path = file.trim();
  if (path.startsWith(`${root}/`)) path = path.slice(root.length + 1);
  while (path.startsWith("./")) path = path.slice(2);
  return path === "" || path.startsWith("/") || path === ".." || path.startsWith("../") ? null : path;
}
