import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  DETECT_FACTS,
  detectChecks,
  givenChecks,
  outputTail,
  parseFacts,
  type RepositoryFacts,
} from "../src/autoimplement-checks.js";
import { afterChange, judgeChecks, recordChange } from "../src/autoimplement-ledger.js";
import { askedPlan, namedDocuments, parsePlanFile, READ_PLAN } from "../src/autoimplement-plan.js";
import { findingOutcomes } from "../src/autoimplement-report.js";
import { type Finding, type Review, triage } from "../src/autoimplement-review.js";

let repo: string;
const sh = (script: string, ...args: string[]) =>
  execFileSync("sh", ["-c", script, "autoimplement", ...args], { cwd: repo, encoding: "utf8" });

beforeAll(() => {
  repo = mkdtempSync(join(tmpdir(), "piw-autoimplement-unit-"));
});
afterAll(() => rmSync(repo, { recursive: true, force: true }));

const facts = (over: Partial<RepositoryFacts>): RepositoryFacts => ({
  packageJson: null,
  makefile: null,
  files: [],
  ...over,
});

describe("autoimplement's check detection", () => {
  it("takes package.json's typecheck, lint and test scripts, run by the package manager its lock file names", () => {
    const packageJson = JSON.stringify({
      scripts: { test: "vitest run", lint: "biome lint .", build: "tsup", typecheck: "tsc" },
    });
    expect(detectChecks(facts({ packageJson, files: ["pnpm-lock.yaml"] }))).toEqual([
      { name: "typecheck", command: "pnpm run typecheck" },
      { name: "lint", command: "pnpm run lint" },
      { name: "test", command: "pnpm run test" },
    ]);
    expect(detectChecks(facts({ packageJson: JSON.stringify({ scripts: { test: "jest" } }) }))).toEqual([
      { name: "test", command: "npm run test" },
    ]);
    expect(detectChecks(facts({ packageJson: '{"scripts":{"lint":"x"}}', files: ["yarn.lock"] }))).toEqual([
      { name: "lint", command: "yarn run lint" },
    ]);
  });

  it("skips npm's placeholder test script and a package.json that does not parse", () => {
    const placeholder = JSON.stringify({ scripts: { test: 'echo "Error: no test specified" && exit 1' } });
    expect(detectChecks(facts({ packageJson: placeholder }))).toEqual([]);
    expect(detectChecks(facts({ packageJson: "{ not json" }))).toEqual([]);
  });

  it("falls back to a Makefile's test target, then pytest, cargo test and go test", () => {
    expect(detectChecks(facts({ makefile: "build:\n\tcc x.c\ntest: build\n\t./run\n" }))).toEqual([
      { name: "make test", command: "make test" },
    ]);
    expect(detectChecks(facts({ makefile: "build:\n\tcc x.c\n" }))).toEqual([]);
    expect(detectChecks(facts({ files: ["pytest.ini"] }))).toEqual([
      { name: "pytest", command: "python3 -m pytest -q" },
    ]);
    expect(
      detectChecks(facts({ files: ["pyproject.toml"] }), { "pyproject.toml": "[tool.pytest.ini_options]\n" }),
    ).toEqual([{ name: "pytest", command: "python3 -m pytest -q" }]);
    expect(detectChecks(facts({ files: ["pyproject.toml"] }), { "pyproject.toml": "[project]\n" })).toEqual(
      [],
    );
    expect(detectChecks(facts({ files: ["Cargo.toml", "go.mod"] }))).toEqual([
      { name: "cargo test", command: "cargo test" },
      { name: "go test", command: "go test ./..." },
    ]);
  });

  it("keeps package.json's lint with a Makefile test when package.json has no test script", () => {
    const found = detectChecks(
      facts({ packageJson: '{"scripts":{"lint":"eslint ."}}', makefile: "test:\n\tx\n" }),
    );
    expect(found).toEqual([
      { name: "lint", command: "npm run lint" },
      { name: "make test", command: "make test" },
    ]);
  });

  it("reads its facts from a real folder with DETECT_FACTS", () => {
    const dir = join(repo, "detect");
    mkdirSync(dir);
    writeFileSync(join(dir, "package.json"), JSON.stringify({ scripts: { test: "node --test" } }, null, 2));
    writeFileSync(join(dir, "Makefile"), "test:\n\tnode --test\n");
    writeFileSync(join(dir, "go.mod"), "module x\n");
    const out = execFileSync("sh", ["-c", DETECT_FACTS], { cwd: dir, encoding: "utf8" });
    const { facts: found } = parseFacts(out);
    expect(found.files).toEqual(["go.mod"]);
    expect(found.makefile).toContain("test:");
    expect(detectChecks(found)).toEqual([{ name: "test", command: "npm run test" }]);
  });

  it("takes given checks as lines, commands or named commands, without blanks or repeats", () => {
    expect(givenChecks("npm test\n\n  make lint  \nnpm test")).toEqual([
      { name: "npm test", command: "npm test" },
      { name: "make lint", command: "make lint" },
    ]);
    expect(givenChecks(["pytest -q", { name: "types", command: "mypy ." }])).toEqual([
      { name: "pytest -q", command: "pytest -q" },
      { name: "types", command: "mypy ." },
    ]);
    expect(givenChecks([`echo ${"x".repeat(100)}`])[0]?.name).toHaveLength(60);
  });
});

describe("a failing check's output", () => {
  it("is cut to its last lines and characters, saying how many lines were left out", () => {
    const log = Array.from({ length: 500 }, (_, i) => `line ${i + 1}`).join("\n");
    const cut = outputTail(log, 80, 6000);
    expect(cut.tail.split("\n")).toHaveLength(80);
    expect(cut.tail.endsWith("line 500")).toBe(true);
    expect(cut.omittedLines).toBe(420);
    const wide = outputTail(Array.from({ length: 10 }, () => "y".repeat(1000)).join("\n"), 80, 2500);
    expect(wide.tail.length).toBeLessThanOrEqual(2500);
    expect(wide.omittedLines).toBe(8);
    const oneHugeLine = outputTail("z".repeat(10_000), 80, 1000);
    expect(oneHugeLine.tail).toHaveLength(1000);
    expect(outputTail("")).toEqual({ tail: "", omittedLines: 0 });
  });
});

const finding = (severity: Finding["severity"], title: string): Finding => ({
  severity,
  title,
  detail: "details",
  file: "src/a.ts",
  line: 3,
  quote: "x",
});
const review = (...findings: Finding[]): Review => ({ summary: "s", findings });

describe("autoimplement's review findings", () => {
  it("send P0/P1 back to fix while rounds remain, and stop after maxRounds", () => {
    const reviews = { correctness: review(finding("P1", "wrong"), finding("P3", "nit")), tests: review() };
    const first = triage(reviews, 1, 2);
    expect(first.next).toBe("fix");
    expect(first.toFix.map((f) => f.title)).toEqual(["wrong"]);
    expect(first.findings).toHaveLength(2);
    expect(triage(reviews, 3, 2).next).toBe("stop");
  });

  it("fix P2 once (polish) and commit on P3 or nothing", () => {
    const polish = triage({ "docs-scope": review(finding("P2", "stale doc"), finding("P3", "nit")) }, 1, 3);
    expect(polish.next).toBe("polish");
    expect(polish.toFix.map((f) => [f.title, f.lens])).toEqual([["stale doc", "docs-scope"]]);
    expect(triage({ tests: review(finding("P3", "nit")) }, 1, 3).next).toBe("commit");
    expect(triage({}, 1, 3)).toEqual({ round: 1, next: "commit", toFix: [], findings: [] });
  });

  it("report what became of each finding", () => {
    const outcomes = (round: ReturnType<typeof triage>) =>
      findingOutcomes(round).map((f) => [f.title, f.outcome]);
    const reviews = { correctness: review(finding("P0", "breaks"), finding("P2", "edge")) };
    expect(outcomes(triage(reviews, 1, 3))).toEqual([
      ["breaks", "fixed"],
      ["edge", "noted"],
    ]);
    expect(outcomes(triage(reviews, 4, 3))).toEqual([
      ["breaks", "open"],
      ["edge", "noted"],
    ]);
    expect(outcomes(triage({ tests: review(finding("P2", "edge")) }, 2, 3))).toEqual([
      ["edge", "fixed once (P2)"],
    ]);
  });
});

const check = (passed: boolean) => ({
  name: "test",
  command: "npm test",
  passed,
  exitCode: passed ? 0 : 1,
  tail: passed ? "" : "1 failed",
  omittedLines: 0,
});

describe("autoimplement's loops", () => {
  it("send failing checks to fix at most maxRounds times, then stop", () => {
    const first = judgeChecks([check(true), check(false)], undefined, undefined, 2);
    expect(first).toMatchObject({ next: "fix", round: 1, fixRounds: 1 });
    expect(first.failing).toHaveLength(1);
    const second = judgeChecks([check(false)], first, undefined, 2);
    expect(second).toMatchObject({ next: "fix", fixRounds: 2 });
    expect(judgeChecks([check(false)], second, undefined, 2).next).toBe("stop");
    const passing = judgeChecks([check(true)], second, undefined, 2);
    expect(passing).toMatchObject({ next: "review", round: 3, fixRounds: 2 });
    expect(passing.runs.map((run) => [run.round, run.passed])).toEqual([
      [1, true],
      [1, false],
      [2, false],
      [3, true],
    ]);
  });

  it("commit without another review once the P2 pass's checks pass", () => {
    const polish = triage({ tests: review(finding("P2", "edge")) }, 1, 3);
    expect(judgeChecks([check(true)], undefined, polish, 3).next).toBe("commit");
    const fix = triage({ tests: review(finding("P1", "gap")) }, 1, 3);
    expect(judgeChecks([check(true)], undefined, fix, 3).next).toBe("review");
  });

  it("record each change step once, and challenge a blocked claim once before stopping", () => {
    const done = { status: "done", summary: "did it", files: [], blocker: null };
    const blocked = { status: "blocked", summary: "cannot", files: [], blocker: "no credentials" };
    const one = recordChange(undefined, { implement: blocked });
    expect(afterChange(one)).toBe("challenge");
    const two = recordChange(one, { implement: blocked, challenge: done });
    expect(two.entries.map((entry) => entry.step)).toEqual(["implement", "challenge"]);
    expect(afterChange(two)).toBe("detect");
    const three = recordChange(two, { implement: blocked, challenge: done, fix: done });
    expect(afterChange(three)).toBe("verify");
    const four = recordChange(three, { implement: blocked, challenge: done, fix: blocked });
    expect(afterChange(four)).toBe("challenge");
    const five = recordChange(four, { implement: blocked, challenge: blocked, fix: blocked });
    expect(afterChange(five)).toBe("stop");
    expect(five.entries).toHaveLength(5);
  });
});

describe("autoimplement's plan", () => {
  it("is the plan input, or a task that is one path ending in .md", () => {
    expect(askedPlan("docs/plans/x.md", undefined)).toBe("docs/plans/x.md");
    expect(askedPlan("add a flag to the CLI", undefined)).toBe("");
    expect(askedPlan("implement docs/plans/x.md please", undefined)).toBe("");
    expect(askedPlan("anything", " plan.md ")).toBe("plan.md");
  });

  it("is read whole with its absolute path and digest, or reported missing", () => {
    mkdirSync(join(repo, "docs", "plans"), { recursive: true });
    writeFileSync(join(repo, "docs", "plans", "p.md"), "# Add a flag\n\nSee docs/cli.md and `README.md`.\n");
    const found = parsePlanFile(sh(READ_PLAN, "docs/plans/p.md"), "docs/plans/p.md", "task");
    expect(found).toMatchObject({ status: "found", title: "Add a flag" });
    if (found.status !== "found") throw new Error("unreachable");
    expect(found.path.endsWith("/docs/plans/p.md")).toBe(true);
    expect(found.digest).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(namedDocuments(found.text, found.path)).toEqual(["docs/cli.md", "README.md"]);
    expect(parsePlanFile(sh(READ_PLAN, "nope.md"), "nope.md", "task")).toEqual({
      status: "missing",
      asked: "nope.md",
    });
  });

  it("names documents without the plan itself or paths outside the repository", () => {
    expect(namedDocuments("docs/plans/p.md ../x.md ./docs/a.md docs/a.md", "/r/docs/plans/p.md")).toEqual([
      "docs/a.md",
    ]);
  });
});
