import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { connectHost } from "@piw/client";
import { type RunHistory, WORKSPACE_EFFECT } from "@piw/protocol";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  waitFor,
  fakeAgentHome,
  type FakeModel,
  lastMessageText,
  lastToolResultText,
  type ModelReply,
  type ModelRequest,
  removeTree,
  startFakeModel,
  text,
  toolCall,
  whenLastMessageContains,
  whenToolResultContains,
} from "@piw/test-kit";
import { cleanUp, makeHome, piw, runIdIn, withoutAnsi } from "./cli-harness.js";

// monitor repairing a code defect through autoimplement, headless: the real CLI, host and worker, a
// real git repository whose check fails until sum.js adds, the read-only inspector choosing implement,
// and autoimplement (planning first, then implement, checks, review and commit) in isolated Pi SDK
// sessions against a scripted model.
const SLOW = 420_000;
const LOADING = { PIW_PREFLIGHT_TIMEOUT_MS: "60000" };
const INSPECT = "Check whether this goal is met now";

let model: FakeModel;
let home: string;
let user: string;
let env: NodeJS.ProcessEnv;
const dirs: string[] = [];

const submit = (output: unknown) => toolCall("workflow", { action: "submit", output });
const git = (cwd: string, ...args: string[]) => execFileSync("git", args, { cwd, encoding: "utf8" }).trim();
/** A script for the inspector of one goal: its prompt names the goal in the requester's words. */
const inspecting =
  (goal: string, reply: ModelReply) =>
  (request: ModelRequest): ModelReply | undefined => {
    const last = lastMessageText(request);
    return last.includes(INSPECT) && last.includes(goal) ? reply : undefined;
  };
const inspection = (goal: string, next: string, action: string | null, failure: string | null = null) =>
  submit({
    goal,
    summary: `the goal is ${goal}`,
    evidence: [],
    failure,
    stopWhenHolds: false,
    next,
    action,
  });

/** A repository whose check exits 2 while sum subtracts. */
function repository(): string {
  const repo = mkdtempSync(join(tmpdir(), "piw-monitor-repo-"));
  dirs.push(repo);
  git(repo, "init", "-q", "-b", "main");
  git(repo, "config", "user.email", "dev@example.com");
  git(repo, "config", "user.name", "Dev");
  writeFileSync(join(repo, "package.json"), JSON.stringify({ type: "module" }, null, 2));
  writeFileSync(join(repo, "sum.js"), "export const sum = (a, b) => a - b;\n");
  writeFileSync(
    join(repo, "check.js"),
    'import { sum } from "./sum.js";\nif (sum(2, 3) !== 5) {\n  console.error("error: sum(2, 3) is " + sum(2, 3));\n  process.exit(2);\n}\n',
  );
  git(repo, "add", ".");
  git(repo, "commit", "-qm", "start");
  return repo;
}

const SUM_GOAL = "sum adds its two arguments";

beforeAll(async () => {
  model = await startFakeModel();
  home = makeHome();
  user = mkdtempSync(join(tmpdir(), "piw-user-"));
  env = { ...fakeAgentHome(user, { model }).env, ...LOADING };
  // Every session ends once its submission is accepted.
  model.reply((r) => (lastToolResultText(r)?.includes("accepted") ? text("Done.") : undefined));
  model.reply(
    inspecting(SUM_GOAL, inspection("failing", "implement", "sum must return a + b", "sum subtracts")),
  );
  // autoplan, included by autoimplement since the repair is a task and not a plan file.
  model.reply(
    whenLastMessageContains(
      "Frame this problem",
      submit({
        goal: "sum adds.",
        successCriteria: ["the check passes"],
        inScope: ["sum.js"],
        outOfScope: [],
        weControl: ["sum.js"],
        outsideOurControl: [],
        evidence: [{ file: "sum.js", fact: "it subtracts" }],
        blocker: null,
      }),
    ),
  );
  model.reply(
    whenLastMessageContains(
      "Propose two or three",
      submit({
        approaches: [
          { name: "Fix sum", summary: "Make it add.", pros: ["small"], cons: ["none"], effort: "small" },
          { name: "Rewrite", summary: "Start over.", pros: ["clean"], cons: ["large"], effort: "large" },
        ],
        ideal: { endState: "sum adds.", dependsOn: [] },
        choice: { approach: "Fix sum", reasons: ["It is the defect."] },
      }),
    ),
  );
  model.reply(
    whenLastMessageContains(
      "Write the implementation plan",
      submit({
        title: "Make sum add",
        summary: "Return a + b.",
        steps: [{ title: "Fix sum", details: "a + b", files: ["sum.js"], verify: "the check passes" }],
        tests: ["the monitor's check"],
        risks: [],
        openQuestions: [],
      }),
    ),
  );
  model.reply(
    whenLastMessageContains(
      "Implement the plan in",
      toolCall("write", { path: "sum.js", content: "export const sum = (a, b) => a + b;\n" }),
    ),
  );
  model.reply(
    whenToolResultContains(
      "sum.js",
      submit({
        status: "done",
        summary: "sum adds its arguments.",
        files: [{ path: "sum.js", change: "modified", why: "it subtracted" }],
        blocker: null,
      }),
    ),
  );
  model.reply(whenLastMessageContains("Review the change in", submit({ summary: "Sound.", findings: [] })));
  // Start the host before the runs: on a busy machine one start can take longer than a client waits.
  await waitFor("a host", async () => (await piw(home, ["list"], { env })).code === 0, 120_000);
}, SLOW);

afterAll(async () => {
  await cleanUp(home);
  await model?.close();
  for (const dir of [user, ...dirs]) removeTree(dir);
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

describe("piw run monitor, repairing through autoimplement", () => {
  it(
    "chooses implement for a code defect: autoimplement fixes it on a branch of its own, commits there only, and the next check is met",
    async () => {
      const repo = repository();
      const input = JSON.stringify({
        task: SUM_GOAL,
        check: "node check.js",
        everyMinutes: 0.01,
        allow: ["repair", "implement"],
      });
      const result = await piw(home, ["run", "monitor", "--input-json", input], { cwd: repo, env });
      expect(result.stderr).toBe("");
      expect(result.code, result.stdout).toBe(0);
      expect(withoutAnsi(result.stdout)).toMatch(/^✓ monitor completed/m);
      const runId = runIdIn(result.stdout);
      const branch = `piw/${runId}-repair-1`;

      const saved = await history(runId);
      const report = saved.steps.find((s) => s.path === "finish")?.output as {
        implemented: { commit: string }[];
      };
      expect(report).toMatchObject({
        met: true,
        ending: "met",
        checks: 2,
        repairs: 1,
        implemented: [
          {
            check: 1,
            status: "committed",
            reason: null,
            branch,
            commit: expect.stringMatching(/^[0-9a-f]{40}$/),
            // The monitor's own check was autoimplement's check, and passed after the change.
            checks: [{ round: 1, name: "monitor check", passed: true }],
            publish: null,
          },
        ],
      });
      // The fix is committed on the repair's own branch, which the checkout is on; main is untouched
      // and nothing was pushed (there is no remote at all).
      const commit = report.implemented[0]?.commit;
      expect(git(repo, "branch", "--show-current")).toBe(branch);
      expect(git(repo, "rev-parse", "HEAD")).toBe(commit);
      expect(readFileSync(join(repo, "sum.js"), "utf8")).toContain("a + b");
      expect(git(repo, "show", "main:sum.js")).toContain("a - b");
      expect(git(repo, "remote")).toBe("");
      // autoimplement's workspace is the repair's own effect, under its mount's path.
      expect(
        saved.effects
          .filter((effect) => effect.effectType === WORKSPACE_EFFECT)
          .map((effect) => [effect.path, effect.status]),
      ).toEqual([["implementation/branch", "settled"]]);
      const reports = saved.messages.filter((m) => m.kind === "notify").map((m) => m.body);
      expect(reports[0]).toMatch(
        /^Monitor check 1 of 100: failing \(the goal is failing\)\. Repairing through autoimplement/,
      );
      expect(reports.at(-1)).toBe("Monitor check 2 of 100: met. The goal is met; the monitor ends.");
      // autoimplement's task came from the failure: the check command and the end of its output.
      const framed = model.requests.map(lastMessageText).find((t) => t.includes("Frame this problem"));
      expect(framed).toContain("node check.js");
      expect(framed).toContain("error: sum(2, 3) is -1");
      model.assertNoErrors();
    },
    SLOW,
  );

  it(
    "refuses implement when the input does not grant it: the inspector answers again and nothing is implemented",
    async () => {
      const repo = repository();
      const goal = "the digest builds";
      model.replyOnce(
        inspecting(goal, inspection("failing", "implement", "rewrite the builder", "it fails")),
      );
      model.replyOnce(whenLastMessageContains("propose wait", inspection("pending", "wait", null)));
      model.reply(inspecting(goal, inspection("met", "wait", null)));
      const input = JSON.stringify({ task: goal, everyMinutes: 0.01, allow: ["repair"] });
      const result = await piw(home, ["run", "monitor", "--input-json", input], { cwd: repo, env });
      expect(result.code, result.stdout + result.stderr).toBe(0);
      const saved = await history(runIdIn(result.stdout));
      expect(saved.steps.some((s) => s.path.startsWith("implementation/") || s.path === "brief")).toBe(false);
      const refused = model.requests.find(
        (r) => lastMessageText(r).includes("propose wait") && lastMessageText(r).includes("implement"),
      );
      if (refused === undefined) throw new Error("the proposal to implement was never refused");
      expect(lastMessageText(refused)).toContain("this monitor may not implement (its input allows: repair)");
      expect(saved.steps.find((s) => s.path === "finish")?.output).toMatchObject({ met: true, checks: 2 });
      model.assertNoErrors();
    },
    SLOW,
  );
});
