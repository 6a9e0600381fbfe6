#!/usr/bin/env node
// Checks the pending changesets, so `pnpm changeset version` can write piw's CHANGELOG at release time.
// Usage: node tools/ci/check-changesets.mjs   (run by `pnpm verify`; needs a git checkout, no remote)
//
// 1. Every .changeset/*.md (but README.md) has the one shape biome keeps, names only the published
//    package `piw` with patch, minor or major, and says something for users. The @piw/* workspace
//    packages are private and never versioned: a changeset that names one would be dropped silently.
// 2. `changeset status` reads them all and plans exactly one release, of `piw`, carrying every one of
//    them. It only reads changesets added since a git ref; the first commit is a ref that every clone
//    has (no base branch or remote needed), so it reads all of them.
import { spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const REPO = join(import.meta.dirname, "..", "..");
const DIR = join(REPO, ".changeset");
const PACKAGE = "piw";
const SHAPE = /^---\n\n"([^"\n]+)": (patch|minor|major)\n\n---\n\n(\S[\s\S]*)\n$/;

const problems = [];
const names = readdirSync(DIR)
  .filter((name) => name.endsWith(".md") && name !== "README.md")
  .sort();
for (const name of names) {
  const match = SHAPE.exec(readFileSync(join(DIR, name), "utf8"));
  if (match === null) {
    problems.push(`${name}: not the changeset shape ("---", blank, "piw": patch, blank, "---", blank, text)`);
  } else if (match[1] !== PACKAGE) {
    problems.push(`${name}: names "${match[1]}"; only "${PACKAGE}" is published, so name it instead`);
  }
}

const out = mkdtempSync(join(tmpdir(), "piw-changesets-"));
try {
  const bin = join(REPO, "node_modules", "@changesets", "cli", "bin.js");
  const roots = spawnSync("git", ["rev-list", "--max-parents=0", "HEAD"], { cwd: REPO, encoding: "utf8" });
  const firstCommit = roots.stdout.trim().split("\n").at(-1);
  if (roots.status !== 0 || !firstCommit) throw new Error(`git rev-list failed: ${roots.stderr.trim()}`);
  const planFile = join(out, "plan.json");
  const status = spawnSync(
    process.execPath,
    [bin, "status", `--since=${firstCommit}`, `--output=${planFile}`],
    {
      cwd: REPO,
      encoding: "utf8",
    },
  );
  if (status.status !== 0) {
    problems.push(`changeset status failed:\n${status.stdout}${status.stderr}`.trimEnd());
  } else {
    const plan = JSON.parse(readFileSync(planFile, "utf8"));
    const released = plan.releases.filter((r) => r.type !== "none").map((r) => r.name);
    const planned = new Set(plan.changesets.map((c) => `${c.id}.md`));
    if (names.length > 0 && (released.length !== 1 || released[0] !== PACKAGE)) {
      problems.push(`changeset status plans releases of [${released.join(", ")}], not just ${PACKAGE}`);
    }
    for (const name of names) {
      if (!planned.has(name)) problems.push(`${name}: changeset status does not carry it into the release`);
    }
  }
} finally {
  rmSync(out, { recursive: true, force: true });
}

if (problems.length > 0) {
  for (const problem of problems) console.error(`changesets: ${problem}`);
  process.exit(1);
}
console.log(`changesets: ${names.length} pending, all for ${PACKAGE}`);
