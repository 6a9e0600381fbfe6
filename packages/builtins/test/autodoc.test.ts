import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { checkAssessment, judge, MAX_UPDATE_ROUNDS } from "../src/autodoc-checks.js";
import { changedFiles, DIGESTS, GATHER, parseDigests, parseGathered } from "../src/autodoc-scripts.js";

let repo: string;
const git = (...args: string[]) => execFileSync("git", args, { cwd: repo, encoding: "utf8" });
const sh = (script: string, ...args: string[]) =>
  execFileSync("sh", ["-c", script, "autodoc", ...args], { cwd: repo, encoding: "utf8" });

beforeAll(() => {
  repo = mkdtempSync(join(tmpdir(), "piw-autodoc-unit-"));
  git("init", "-q", "-b", "main");
  git("config", "user.email", "dev@example.com");
  git("config", "user.name", "Dev");
  writeFileSync(join(repo, "README.md"), "# x\n");
  writeFileSync(join(repo, "code.ts"), "export const a = 1;\n");
  git("add", ".");
  git("commit", "-qm", "base");
  writeFileSync(join(repo, "code.ts"), "export const a = 2;\n// ::autodoc:: plan\n");
  writeFileSync(join(repo, "PLAN.md"), "Raise a to 2.\n");
  git("add", ".");
  git("commit", "-qm", "raise a");
});
afterAll(() => rmSync(repo, { recursive: true, force: true }));

describe("autodoc's shell scripts", () => {
  it("gather the commits, changed files, documents, a plan file and the diff, whatever the diff holds", () => {
    const gathered = parseGathered(sh(GATHER, "HEAD^", "PLAN.md"));
    expect(gathered.log).toEqual([expect.stringMatching(/^[0-9a-f]+ raise a$/)]);
    expect(gathered.files).toEqual(["PLAN.md", "code.ts"]);
    expect(gathered.documents).toEqual(["PLAN.md", "README.md"]);
    expect(gathered.planFile).toBe("Raise a to 2.\n");
    expect(gathered.diff).toContain("+// ::autodoc:: plan");
    expect(gathered.diffTruncated).toBe(false);
  });

  it("read no plan file outside the repository", () => {
    expect(parseGathered(sh(GATHER, "HEAD^", "../etc/passwd")).planFile).toBeNull();
    expect(parseGathered(sh(GATHER, "HEAD^", "/etc/passwd")).planFile).toBeNull();
  });

  it("digest files with sha256, mark missing ones, and see every file a step touched", () => {
    const before = parseDigests(sh(DIGESTS, "all", "README.md", "gone.md"));
    expect(before["README.md"]).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(before["gone.md"]).toBeNull();
    writeFileSync(join(repo, "code.ts"), "export const a = 3;\n");
    writeFileSync(join(repo, "README.md"), "# y\n");
    const after = parseDigests(sh(DIGESTS, "all", "README.md", "gone.md"));
    expect(changedFiles(before, after)).toEqual(["README.md", "code.ts"]);
    git("checkout", "--", ".");
  });
});

const claim = { document: "README.md", claim: "a is 2", problem: "a is 3" };

describe("autodoc's judgement of a round", () => {
  const before = { "README.md": "sha256:1", "code.ts": null };
  const edited = { "README.md": "sha256:2", "code.ts": null };

  it("is ready when the update changed its files and every claim is backed by a line that exists", () => {
    const verdict = judge({
      round: 1,
      allowed: ["README.md"],
      before,
      after: edited,
      verification: {
        claims: [{ ...claim, backed: true, evidence: [{ file: "code.ts", line: 1, quote: "a = 2" }] }],
      },
      exists: [true],
    });
    expect(verdict).toMatchObject({ next: "ready", changed: ["README.md"], outside: [], unbacked: [] });
  });

  it("goes back to the update once for an unbacked claim or missing evidence, then blocks", () => {
    const args = {
      allowed: ["README.md"],
      before,
      after: edited,
      verification: {
        claims: [
          { ...claim, backed: false, evidence: [] },
          { ...claim, claim: "b", backed: true, evidence: [{ file: "code.ts", line: 99, quote: "x" }] },
        ],
      },
      exists: [false],
    };
    const first = judge({ ...args, round: 1 });
    expect(first.next).toBe("update");
    expect(first.unbacked.map((u) => u.problem)).toEqual([
      "a is 3",
      "the lines quoted as evidence do not exist",
    ]);
    expect(judge({ ...args, round: MAX_UPDATE_ROUNDS }).next).toBe("blocked");
  });

  it("blocks at once when the update changed a file it was not given, and counts no edit as unbacked", () => {
    const outside = judge({
      round: 1,
      allowed: ["README.md"],
      before,
      after: { ...edited, "code.ts": "sha256:9" },
      verification: { claims: [] },
      exists: [],
    });
    expect(outside).toMatchObject({ next: "blocked", outside: ["code.ts"] });
    const none = judge({
      round: 1,
      allowed: ["README.md"],
      before,
      after: before,
      verification: { claims: [] },
      exists: [],
    });
    expect(none).toMatchObject({
      next: "update",
      unbacked: [{ document: "README.md", problem: "the file was not changed" }],
    });
  });
});

describe("autodoc's check of the assessment", () => {
  const doc = (path: string, decision: "current" | "update", edits: string[] = []) => ({
    path,
    decision,
    reason: "r",
    edits,
  });
  const check = (documents: ReturnType<typeof doc>[], named: string[] = []) =>
    checkAssessment({ documents, summary: "s" }, ["README.md", "docs/a.md"], named, "/repo");

  it("takes listed and named documents, by relative or absolute path", () => {
    expect(
      check([doc("/repo/README.md", "current"), doc("./new.md", "update", ["add"])], ["new.md"]),
    ).toBeUndefined();
  });

  it("refuses unknown, outside, repeated and unnamed documents, and updates without edits", () => {
    expect(check([doc("other.md", "current")])).toMatch(/not listed: other.md/);
    expect(check([doc("../x.md", "current")])).toMatch(/inside the repository/);
    expect(check([doc("README.md", "current"), doc("/repo/README.md", "current")])).toMatch(
      /twice: README.md/,
    );
    expect(check([doc("README.md", "current")], ["docs/a.md"])).toMatch(/missing: docs\/a.md/);
    expect(check([doc("README.md", "update")])).toMatch(/list the edits/);
  });
});
