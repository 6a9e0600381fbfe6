import { execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, statSync, writeFileSync } from "node:fs";
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
import { cleanUp, makeHome, piw } from "./cli-harness.js";

// The built-in autoplan through `piw run`, headless: no conversation, so its three agent steps run in
// isolated read-only Pi SDK sessions against a scripted model, and the plan file is really written.
const SLOW = 240_000;
const PROBLEM = "add a --verbose flag to the CLI";

let model: FakeModel;
let home: string;
let user: string;
let repo: string;
let env: NodeJS.ProcessEnv;

const submit = (output: unknown) => toolCall("workflow", { action: "submit", output });

beforeAll(async () => {
  model = await startFakeModel();
  home = makeHome();
  user = mkdtempSync(join(tmpdir(), "piw-user-"));
  env = fakeAgentHome(user, { model }).env;
  repo = mkdtempSync(join(tmpdir(), "piw-autoplan-"));
  execFileSync("git", ["init", "-q", "-b", "main"], { cwd: repo });
  writeFileSync(join(repo, "cli.ts"), "export const options = { help: false };\n");
  // A problem the repository cannot answer: the frame names a blocker, and nothing is proposed.
  model.reply(
    whenLastMessageContains(
      "migrate the billing service",
      submit({
        goal: "Move billing to the new provider.",
        successCriteria: ["invoices go out"],
        inScope: [],
        outOfScope: ["the billing service"],
        weControl: [],
        outsideOurControl: ["the billing service"],
        evidence: [],
        blocker: "The billing service is not in this repository.",
      }),
    ),
  );
  model.reply(
    whenLastMessageContains(
      "Frame this problem",
      submit({
        goal: "Users can see each step the CLI takes.",
        successCriteria: ["--verbose prints each step to stderr"],
        inScope: ["cli.ts"],
        outOfScope: ["log shipping"],
        weControl: ["the CLI's options"],
        outsideOurControl: ["the user's terminal"],
        evidence: [{ file: "cli.ts", fact: "options hold only help" }],
        blocker: null,
      }),
    ),
  );
  model.reply(
    whenLastMessageContains(
      "Propose two or three",
      submit({
        approaches: [
          {
            name: "A flag",
            summary: "Add verbose to options.",
            pros: ["small"],
            cons: ["one level"],
            effort: "small",
          },
          {
            name: "Levels",
            summary: "A --log-level option.",
            pros: ["general"],
            cons: ["more"],
            effort: "medium",
          },
        ],
        ideal: { endState: "Structured, levelled logs.", dependsOn: ["a logging library"] },
        choice: { approach: "A flag", reasons: ["It is what was asked."] },
      }),
    ),
  );
  model.reply(
    whenLastMessageContains(
      "Write the implementation plan",
      submit({
        title: "A --verbose flag",
        summary: "Add the option and print each step when it is set.",
        steps: [
          {
            title: "Add the option",
            details: "verbose: false in options.",
            files: ["cli.ts"],
            verify: "--help lists it",
          },
        ],
        tests: ["prints steps with --verbose"],
        risks: [],
        openQuestions: [],
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

type Result = { runId: string; view: { output: { value: Record<string, unknown> } } };

async function autoplan(args: string[]): Promise<Result> {
  const result = await piw(home, ["run", "autoplan", "--json", ...args], { cwd: repo, env });
  expect(result.stderr).toBe("");
  expect(result.code).toBe(0);
  return JSON.parse(result.stdout) as Result;
}

describe("piw run autoplan, headless", () => {
  it(
    "keeps the words verbatim, plans in isolated read-only sessions and writes the plan file; the same plan again is not rewritten",
    async () => {
      const first = await autoplan([PROBLEM]);
      const day = new Date().toISOString().slice(0, 10);
      const relative = `docs/plans/${day}-add-a-verbose-flag-to-the-cli.md`;
      const path = join(repo, relative);
      const text = readFileSync(path, "utf8");
      expect(first.view.output.value).toMatchObject({
        status: "ready",
        file: "created",
        path: relative,
        digest: expect.stringMatching(/^sha256:[0-9a-f]{64}$/),
        title: "A --verbose flag",
        approach: "A flag",
        chosenBy: "automatic",
        bytes: Buffer.byteLength(text),
      });
      expect(text).toContain(`> ${PROBLEM}\n`);
      expect(text).toContain("**A flag**: the model's choice, taken automatically at the approval gate.");
      // The first fact of the run is the problem exactly as given.
      const saved = await history(first.runId);
      expect(saved.steps[0]).toMatchObject({ path: "problem", output: { problem: PROBLEM } });
      const steps = model.requests.filter((r) =>
        /Frame this problem|Propose two or three|Write the implementation plan/.test(lastMessageText(r)),
      );
      expect(steps.length).toBeGreaterThanOrEqual(3);
      for (const request of steps) {
        expect(lastMessageText(request)).toContain(PROBLEM);
        expect(request.tools.map((t) => t.function.name).sort()).toEqual([
          "find",
          "grep",
          "ls",
          "read",
          "workflow",
        ]);
      }

      const inode = statSync(path).ino;
      const again = await autoplan([PROBLEM]);
      expect(again.view.output.value).toMatchObject({
        status: "unchanged",
        path: relative,
        digest: first.view.output.value.digest,
        message: expect.stringContaining("already holds this exact plan"),
      });
      expect(statSync(path).ino).toBe(inode);
      model.assertNoErrors();
    },
    SLOW,
  );

  it(
    "ends blocked with the frame's reason, proposing nothing and writing no file",
    async () => {
      const before = model.requests.length;
      const out = await autoplan(["migrate the billing service"]);
      expect(out.view.output.value).toEqual({
        status: "blocked",
        stage: "frame",
        reason: "The billing service is not in this repository.",
      });
      const later = model.requests.slice(before).map(lastMessageText);
      expect(later.some((message) => message.includes("Propose two or three"))).toBe(false);
      expect(
        existsSync(
          join(
            repo,
            "docs",
            "plans",
            `${new Date().toISOString().slice(0, 10)}-migrate-the-billing-service.md`,
          ),
        ),
      ).toBe(false);
    },
    SLOW,
  );

  it(
    "replaces an older plan at the planFile given",
    async () => {
      writeFileSync(join(repo, "PLAN.md"), "an older plan\n");
      const input = JSON.stringify({ problem: PROBLEM, planFile: "PLAN.md", approval: "skip" });
      const out = await autoplan(["--input-json", input]);
      expect(out.view.output.value).toMatchObject({
        status: "ready",
        file: "replaced",
        path: "PLAN.md",
        chosenBy: "model",
      });
      expect(readFileSync(join(repo, "PLAN.md"), "utf8")).toContain("# A --verbose flag\n");
    },
    SLOW,
  );
});
