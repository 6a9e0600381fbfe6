import { spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { connectHost } from "@piw/client";
import type { RunHistory, RunView } from "@piw/protocol";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  fakeAgentHome,
  type FakeModel,
  lastMessageText,
  removeTree,
  startFakeModel,
  text,
  toolCall,
  waitFor,
} from "@piw/test-kit";
import { cleanUp, collect, example, makeHome, type PiwResult, repo, runIdIn } from "./cli-harness.js";

// examples/parallel-review.workflow.ts from a shell, with the built CLI (`pnpm build` first): the
// built host and worker it starts, real `node --check` and `node --test` commands in the project, and
// an isolated Pi SDK session in the worker that talks to a scripted model on 127.0.0.1.
const SLOW = 240_000;
const CLI = join(repo, "apps/piw/dist/main.js");

let model: FakeModel;
let home: string;
let user: string;
let env: NodeJS.ProcessEnv;
const projects: string[] = [];

beforeAll(async () => {
  if (!existsSync(CLI)) throw new Error(`${CLI} is missing: run pnpm build first`);
  model = await startFakeModel();
  home = makeHome();
  user = mkdtempSync(join(tmpdir(), "piw-user-"));
  env = { ...process.env, ...fakeAgentHome(user, { model }).env, PIW_HOME: home, NO_COLOR: "1" };
  // The built apps, not the sources: nothing may point the CLI or the host elsewhere.
  for (const name of ["PIW_HOST_COMMAND", "PIW_WORKER_COMMAND", "PIW_PREFLIGHT_COMMAND"]) delete env[name];
});

afterAll(async () => {
  await cleanUp(home);
  await model?.close();
  removeTree(user);
  for (const project of projects) removeTree(project);
});

/** A project with a sum module and its test; `bug` makes the module wrong and adds a file that does not parse. */
function makeProject(bug: boolean): string {
  const project = mkdtempSync(join(tmpdir(), "piw-parallel-review-"));
  projects.push(project);
  mkdirSync(join(project, "src"));
  writeFileSync(join(project, "src", "sum.mjs"), `export const sum = (a, b) => a ${bug ? "-" : "+"} b;\n`);
  writeFileSync(
    join(project, "src", "sum.test.mjs"),
    `import assert from "node:assert/strict";
import { test } from "node:test";
import { sum } from "./sum.mjs";
test("sum adds", () => assert.equal(sum(2, 3), 5));
test("sum of nothing is zero", () => assert.equal(sum(0, 0), 0));
`,
  );
  if (bug) writeFileSync(join(project, "src", "half.mjs"), "export const half = (n) => n / ;\n");
  return project;
}

function piwRun(args: string[], cwd: string): Promise<PiwResult> {
  return collect(spawn(process.execPath, [CLI, ...args], { cwd, env, stdio: ["ignore", "pipe", "pipe"] }));
}

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

/** The last saved visit of each path that ran, by path; checks that the join closed after its branches. */
function outputs(saved: RunHistory): Record<string, { status: string; output: unknown }> {
  const byPath: Record<string, { status: string; output: unknown }> = {};
  for (const step of saved.steps) byPath[step.path] = { status: step.status, output: step.output };
  const join = saved.steps.find((s) => s.path === "checks");
  const branches = saved.steps.filter((s) => s.path.startsWith("checks/"));
  expect(branches).toHaveLength(3);
  for (const branch of branches) {
    expect(branch.finishedAt, branch.path).not.toBeNull();
    expect(branch.finishedAt as number, branch.path).toBeLessThanOrEqual(join?.finishedAt as number);
  }
  return byPath;
}

describe("examples/parallel-review.workflow.ts with the built piw run, from a shell", () => {
  it(
    "joins green lint, tests and an approving review, and the decision takes the ship route",
    async () => {
      const project = makeProject(false);
      model.replyOnce((r) =>
        lastMessageText(r).includes("Review the green change")
          ? toolCall("read", { path: "src/sum.mjs" })
          : undefined,
      );
      model.replyOnce((r) =>
        JSON.stringify(r.messages).includes("Review the green change") &&
        JSON.stringify(r.messages).includes("a + b")
          ? toolCall("workflow", { action: "submit", output: { verdict: "approve", findings: [] } })
          : undefined,
      );
      const result = await piwRun(["run", example("parallel-review"), "the green change"], project);
      expect(result.code, result.stdout + result.stderr).toBe(0);
      expect(result.stdout).toContain("completed");
      const runId = runIdIn(result.stdout);

      const saved = outputs(await history(runId));
      expect(saved.checks).toEqual({
        status: "succeeded",
        output: {
          lint: { ok: true, broken: [] },
          tests: { passed: true, failing: [] },
          review: { verdict: "approve", findings: [] },
        },
      });
      // Each branch saved its visit under its own path.
      expect(saved["checks/lint/lint"]?.status).toBe("succeeded");
      expect(saved["checks/tests/tests"]?.status).toBe("succeeded");
      expect(saved["checks/review/review"]?.status).toBe("succeeded");
      expect(saved.verdict?.output).toBe("ship");
      expect(saved.ship).toEqual({ status: "succeeded", output: { verdict: "green" } });
      expect(saved.fix).toBeUndefined();
      // The run's output is the ship node's.
      expect(result.stdout).toContain('{"verdict":"green"}');
      model.assertNoErrors();
    },
    SLOW,
  );

  it(
    "joins a syntax error, a failing test and a review asking for changes, and takes the fix route with all of them",
    async () => {
      const project = makeProject(true);
      const finding = { file: "src/sum.mjs", note: "sum subtracts" };
      model.replyOnce((r) =>
        lastMessageText(r).includes("Review the broken change")
          ? toolCall("workflow", {
              action: "submit",
              output: { verdict: "request_changes", findings: [finding] },
            })
          : undefined,
      );
      const result = await piwRun(["run", example("parallel-review"), "the broken change"], project);
      // The checks found problems, but nothing failed: the run completes along the fix route.
      expect(result.code, result.stdout + result.stderr).toBe(0);
      const runId = runIdIn(result.stdout);

      const saved = outputs(await history(runId));
      expect(saved.checks).toEqual({
        status: "succeeded",
        output: {
          lint: { ok: false, broken: ["./src/half.mjs"] },
          tests: { passed: false, failing: ["sum adds"] },
          review: { verdict: "request_changes", findings: [finding] },
        },
      });
      expect(saved.verdict?.output).toBe("fix");
      expect(saved.ship).toBeUndefined();
      const report = {
        verdict: "changes needed",
        syntaxErrors: ["./src/half.mjs"],
        failingTests: ["sum adds"],
        review: [finding],
      };
      expect(saved.fix).toEqual({ status: "succeeded", output: report });
      expect(result.stdout).toMatch(/✓ fix +compute/);
      expect(result.stdout).not.toMatch(/✓ ship/);
      model.assertNoErrors();
    },
    SLOW,
  );

  it(
    "piw cancel mid-review stops every branch: the run ends cancelled and the reviewer's model call is cut off",
    async () => {
      const project = makeProject(false);
      const reviewing = (r: { messages: unknown[] }) =>
        JSON.stringify(r.messages).includes("Review the slow change");
      model.replyOnce((r) =>
        reviewing(r) ? text("thinking ".repeat(400), { chunkSize: 9, delayMs: 100 }) : undefined,
      );
      const started = await piwRun(
        ["run", example("parallel-review"), "the slow change", "--detach"],
        project,
      );
      expect(started.code, started.stderr).toBe(0);
      const runId = runIdIn(started.stdout);
      // The reviewer's session is streaming its answer: its branch is mid-flight.
      await model.waitForRequest(reviewing, 90_000);
      const cancelled = await piwRun(["cancel", runId], project);
      expect(cancelled.code, cancelled.stderr).toBe(0);

      // Cancel commits first: the run is cancelled as soon as the command returns.
      const status = await piwRun(["status", runId, "--json"], project);
      const view = JSON.parse(status.stdout) as RunView;
      expect(view.status).toBe("cancelled");
      const states = Object.fromEntries(view.nodes.map((n) => [n.path, n.state]));
      // The join never closed, the review in flight was cancelled, and nothing after the join ran.
      expect(states).toMatchObject({
        checks: "cancelled",
        "checks/review/review": "cancelled",
        verdict: "pending",
        ship: "pending",
        fix: "pending",
      });
      const steps = (await history(runId)).steps;
      expect(steps.filter((s) => s.status === "succeeded" && !s.path.startsWith("checks/"))).toEqual([]);
      // The session was aborted: the model saw its client hang up before the reply was done.
      await waitFor(
        "the reviewer's model call to end",
        () => model.requests.some((r) => reviewing(r) && r.outcome !== undefined),
        60_000,
      );
      expect(model.requests.find((r) => reviewing(r))?.outcome).toBe("client_closed");
      model.assertNoErrors();
    },
    SLOW,
  );
});
