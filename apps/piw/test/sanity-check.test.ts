import { execFileSync } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { connectHost } from "@piw/client";
import type { RunHistory } from "@piw/protocol";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  fakeAgentHome,
  type FakeModel,
  lastMessageText,
  removeTree,
  startFakeModel,
  toolCall,
  whenLastMessageContains,
} from "@piw/test-kit";
import { cleanUp, makeHome, piw, runIdIn } from "./cli-harness.js";

// The built-in sanity-check through `piw run`, headless as in CI: the real CLI, host and worker, real
// git in a temp repository, and five isolated Pi SDK sessions talking to a scripted model.
const SLOW = 240_000;

let model: FakeModel;
let home: string;
let user: string;
let repo: string;
let env: NodeJS.ProcessEnv;

function git(...args: string[]): void {
  execFileSync("git", args, { cwd: repo, stdio: "ignore" });
}

beforeAll(async () => {
  model = await startFakeModel();
  home = makeHome();
  user = mkdtempSync(join(tmpdir(), "piw-user-"));
  env = fakeAgentHome(user, { model }).env;
  repo = mkdtempSync(join(tmpdir(), "piw-sanity-"));
  git("init", "-q", "-b", "main");
  git("config", "user.email", "dev@example.com");
  git("config", "user.name", "Dev");
  writeFileSync(join(repo, "retry.ts"), "export const retries = 3;\n");
  git("add", ".");
  git("commit", "-qm", "base");
  writeFileSync(
    join(repo, "retry.ts"),
    [
      "export const retries = 3;",
      "export function withRetry(run: () => void): void {",
      "  for (let i = 0; i < retries; i++) run();",
      "}",
      "export function withRetryAgain(run: () => void): void {",
      "  for (let i = 0; i < retries; i++) run();",
      "}",
      "",
    ].join("\n"),
  );
  git("commit", "-qam", "retry helpers");

  // Each reviewer answers its own question; only the duplication reviewer finds something, and one of
  // its two claims points at a file that does not exist.
  const review = (findings: unknown[], verdict = "keep") =>
    toolCall("workflow", {
      action: "submit",
      output: { verdict, summary: "Looked at retry.ts.", findings, questions: [] },
    });
  model.reply(
    whenLastMessageContains(
      "written twice?",
      review(
        [
          { claim: "withRetryAgain repeats withRetry.", file: "retry.ts", line: 5, severity: "must" },
          { claim: "A third copy lives in ghost.ts.", file: "ghost.ts", line: 3, severity: "should" },
        ],
        "simplify",
      ),
    ),
  );
  for (const question of ["needed for what it sets out", "contracts right?", "scope and the tests right?"]) {
    model.reply(whenLastMessageContains(question, review([])));
  }
  // The verifier keeps both claims; piw's own check then drops the one whose file is missing.
  model.reply(
    whenLastMessageContains(
      "Other reviewers made the claims",
      toolCall("workflow", {
        action: "submit",
        output: {
          kept: [
            { id: "duplication-1", file: "retry.ts", line: 5, evidence: "export function withRetryAgain(" },
            { id: "duplication-2", file: "ghost.ts", line: 3, evidence: "(made up)" },
          ],
          dropped: [],
          verdict: "simplify",
          summary: "Two copies of the same retry loop.",
          requiredChanges: [
            {
              change: "Delete withRetryAgain; call withRetry.",
              file: "retry.ts",
              line: 5,
              because: ["duplication-1"],
            },
          ],
          questions: ["Is withRetryAgain used anywhere?"],
        },
      }),
    ),
  );
});

afterAll(async () => {
  await cleanUp(home);
  await model?.close();
  for (const dir of [user, repo]) removeTree(dir);
});

async function history(runId: string): Promise<RunHistory> {
  const host = await connectHost({ stateDir: home, client: "test" });
  try {
    const found = await host.call("runs.history", { runId });
    if (!found) throw new Error(`no history for ${runId}`);
    return found;
  } finally {
    host.close();
  }
}

describe("piw run sanity-check, headless", () => {
  it(
    "reviews the change against HEAD^ with four isolated reviewers and a verifier, keeping only claims backed by a real file and line",
    async () => {
      const result = await piw(home, ["run", "sanity-check", "--json", "the", "new", "retry", "helper"], {
        cwd: repo,
        env,
      });
      expect(result.stderr).toBe("");
      expect(result.code).toBe(0);
      const out = JSON.parse(result.stdout) as {
        runId: string;
        view: { input: { value: unknown }; output: { value: Record<string, unknown> } };
      };
      // Free words went to the built-in's main field.
      expect(out.view.input.value).toEqual({ focus: "the new retry helper" });
      const head = execFileSync("git", ["rev-parse", "HEAD^"], { cwd: repo, encoding: "utf8" }).trim();
      expect(out.view.output.value).toMatchObject({
        verdict: "simplify",
        base: { ref: "HEAD^", sha: head, how: "parent" },
        mode: "parallel",
        requiredChanges: [{ change: "Delete withRetryAgain; call withRetry.", file: "retry.ts", line: 5 }],
        questions: ["Is withRetryAgain used anywhere?"],
        findings: [expect.objectContaining({ question: "duplication", file: "retry.ts", line: 5 })],
        dropped: 1,
        failing: false,
      });

      // Every reviewer got the purpose and the diff, in a fresh read-only session.
      const reviewers = model.requests.filter((r) => lastMessageText(r).includes("Repository: "));
      expect(reviewers.length).toBeGreaterThanOrEqual(5);
      for (const request of reviewers) {
        expect(lastMessageText(request)).toContain("the new retry helper");
        expect(lastMessageText(request)).toContain("+export function withRetryAgain");
        expect(request.tools.map((t) => t.function.name).sort()).toEqual([
          "find",
          "grep",
          "ls",
          "read",
          "workflow",
        ]);
      }
      const saved = await history(out.runId);
      expect(saved.steps.filter((s) => s.path.startsWith("parallel-review/")).length).toBeGreaterThanOrEqual(
        4,
      );
      expect(saved.steps.some((s) => s.path.startsWith("serial-review"))).toBe(false);
      model.assertNoErrors();
    },
    SLOW,
  );

  it(
    "fails the run (exit 1) when the verdict is one failOn names, after saving the report; serial mode asks the reviewers in turn",
    async () => {
      const input = JSON.stringify({ mode: "serial", failOn: ["simplify", "drop"] });
      const result = await piw(home, ["run", "sanity-check", "--input-json", input], { cwd: repo, env });
      expect(result.code).toBe(1);
      expect(result.stdout + result.stderr).toContain("sanity-check verdict simplify is listed in failOn");
      const saved = await history(runIdIn(result.stdout + result.stderr));
      const report = saved.steps.find((s) => s.path === "report");
      expect(report?.output).toMatchObject({ verdict: "simplify", mode: "serial", failing: true });
      const serial = saved.steps.filter(
        (s) => s.path.startsWith("serial-review/") && s.path.split("/").length === 3,
      );
      // One reviewer at a time: each starts after the one before it finished.
      const sorted = [...serial].sort((a, b) => a.startedAt - b.startedAt);
      for (let i = 1; i < sorted.length; i++) {
        expect(sorted[i]?.startedAt).toBeGreaterThanOrEqual(
          sorted[i - 1]?.finishedAt ?? Number.POSITIVE_INFINITY,
        );
      }
      expect(sorted.length).toBe(4);
    },
    SLOW,
  );
});
