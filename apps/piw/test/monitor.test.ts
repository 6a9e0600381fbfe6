import { existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { connectHost } from "@piw/client";
import type { RunHistory, RunView } from "@piw/protocol";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  fakeAgentHome,
  type FakeModel,
  hostPidIn,
  isAlive,
  lastMessageText,
  removeTree,
  startFakeModel,
  toolCall,
  waitFor,
  whenLastMessageContains,
} from "@piw/test-kit";
import { cleanUp, collect, makeHome, piw, runIdIn, spawnPiw, withoutAnsi } from "./cli-harness.js";

// The built-in monitor through `piw run`, headless: the real CLI, host and worker, a check command
// that counts its own runs in a file, the durable clock between checks, and (for the repair) an
// isolated Pi SDK session talking to a scripted model.
const SLOW = 180_000;
/** Loading a workflow from source can take more than the default 10 s when the machine is busy. */
const LOADING = { PIW_PREFLIGHT_TIMEOUT_MS: "60000" };

let home: string;
let dir: string;
let model: FakeModel;
let user: string;
/** The run's environment: a Pi folder whose model is the scripted one (repair may need it). */
let env: NodeJS.ProcessEnv;
beforeAll(async () => {
  home = makeHome();
  dir = mkdtempSync(join(tmpdir(), "piw-monitor-"));
  model = await startFakeModel();
  user = mkdtempSync(join(tmpdir(), "piw-user-"));
  env = { ...fakeAgentHome(user, { model }).env, ...LOADING };
  await ensureHost();
}, SLOW);
afterAll(async () => {
  await cleanUp(home);
  await model.close();
  removeTree(dir);
  removeTree(user);
});

/** A check that appends a line to `count` each time it runs, then tests for `flag`. */
const countingCheck = (count: string, flag: string) => `echo check >> '${count}'; test -e '${flag}'`;
const checksIn = (count: string): number =>
  existsSync(count)
    ? readFileSync(count, "utf8")
        .split("\n")
        .filter((line) => line !== "").length
    : 0;

/** Start the host before the runs: on a busy machine one start can take longer than a client waits. */
async function ensureHost(): Promise<void> {
  await waitFor("a host", async () => (await piw(home, ["list"], { env })).code === 0, 120_000);
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

/** The run's view, or null while no host answers (one is starting). */
async function statusOf(runId: string): Promise<RunView | null> {
  const result = await piw(home, ["status", runId, "--json"], { env });
  return result.code === 0 ? (JSON.parse(result.stdout) as RunView) : null;
}

describe("piw run monitor, headless", () => {
  it(
    "checks, parks on the clock, and ends met once the file appears; each check is a passive message",
    async () => {
      const count = join(dir, "count-1");
      const flag = join(dir, "flag-1");
      const input = JSON.stringify({
        task: "the flag file exists",
        check: countingCheck(count, flag),
        everyMinutes: 0.01,
      });
      const follower = collect(spawnPiw(home, ["run", "monitor", "--input-json", input], { cwd: dir, env }));
      await waitFor("the first check", () => checksIn(count) >= 1, 60_000).catch((error: unknown) => {
        throw new Error(`${String(error)}\n${follower.stdout()}`, { cause: error });
      });
      writeFileSync(flag, "ready");
      const result = await follower;
      expect(result.stderr).toBe("");
      expect(result.code).toBe(0);
      expect(withoutAnsi(result.stdout)).toMatch(/^✓ monitor completed/m);

      const saved = await history(runIdIn(result.stdout));
      const report = saved.steps.find((s) => s.path === "finish")?.output;
      const checks = checksIn(count);
      expect(checks).toBeGreaterThanOrEqual(2);
      expect(report).toMatchObject({ met: true, ending: "met", checks, repairs: 0 });
      // Every check but the last waited on the clock, and each one was reported without a turn.
      expect(saved.steps.filter((s) => s.path === "pause")).toHaveLength(checks - 1);
      const reports = saved.messages.filter((m) => m.kind === "notify");
      expect(reports).toHaveLength(checks);
      expect(reports[0]?.body).toMatch(
        /^Monitor check 1 of 100: not met yet\. Next check at \d\d:\d\d:\d\d UTC/,
      );
      expect(reports.at(-1)?.body).toBe(
        `Monitor check ${checks} of 100: met. The goal is met; the monitor ends.`,
      );
    },
    SLOW,
  );

  it(
    "survives a kill -9 of its host during a wait: the run wakes once and finishes",
    async () => {
      const count = join(dir, "count-2");
      const flag = join(dir, "flag-2");
      const input = JSON.stringify({
        task: "the flag file exists",
        check: countingCheck(count, flag),
        everyMinutes: 0.2,
      });
      const started = await piw(home, ["run", "monitor", "--detach", "--input-json", input], {
        cwd: dir,
        env,
      });
      expect(started.code).toBe(0);
      const runId = runIdIn(started.stdout);
      await waitFor(
        "the run to park on its wait",
        async () => (await statusOf(runId))?.status === "parked",
        60_000,
      );
      expect(checksIn(count)).toBe(1);
      // Parked between checks, every view has the monitor's progress and the latest it ends: its
      // 99 remaining checks at one per 12 s from the first check.
      const parked = await statusOf(runId);
      expect(parked?.runProgress).toMatchObject({ done: 1, total: 100, eta: { confidence: "high" } });
      const endsAt = parked?.runProgress?.eta?.at ?? 0;
      expect(endsAt).toBeGreaterThan((parked?.createdAt ?? 0) + 98 * 12_000);
      expect(endsAt).toBeLessThanOrEqual(Date.now() + 99 * 12_000);
      const shown = withoutAnsi((await piw(home, ["status", runId], { env })).stdout);
      expect(shown).toMatch(/^progress +1\/100 \S+ · \d+ min left · /m);
      const host = hostPidIn(home);
      if (host === undefined) throw new Error("no host");
      process.kill(host, "SIGKILL");
      await waitFor("the host to die", () => !isAlive(host), 10_000);
      writeFileSync(flag, "ready");

      // Any client starts a new host, which wakes the parked run at its due time.
      await waitFor(
        "the run to end",
        async () => ((await statusOf(runId))?.outcome ?? null) !== null,
        120_000,
      );
      const view = await statusOf(runId);
      expect(view).toMatchObject({ status: "done", outcome: "completed" });
      expect(checksIn(count)).toBe(2);
      const saved = await history(runId);
      const launches = saved.events.filter((e) => e.type === "worker.launched");
      expect(launches).toHaveLength(2);
      expect(saved.steps.find((s) => s.path === "finish")?.output).toMatchObject({
        ending: "met",
        checks: 2,
      });
    },
    SLOW,
  );
});

describe("piw run monitor, repairing with an isolated step", () => {
  it(
    "repairs a failing check once, and stops with the reason when the same failure comes back",
    async () => {
      const count = join(dir, "count-3");
      const check = `echo check >> '${count}'; echo 'error: the config is missing' >&2; exit 2`;
      model.reply(
        whenLastMessageContains(
          "found something failing",
          toolCall("workflow", {
            action: "submit",
            output: { summary: "Wrote a config file.", changed: ["config.json"] },
          }),
        ),
      );
      const input = JSON.stringify({ task: "the service has its config", check, everyMinutes: 0.01 });
      const result = await piw(home, ["run", "monitor", "--input-json", input], { cwd: dir, env });
      expect(result.code).not.toBe(0);
      expect(result.stdout + result.stderr).toContain(
        "monitor ended without meeting its goal (repeated_failure): The same failure came back after a repair: exit 2: error: the config is missing",
      );
      expect(checksIn(count)).toBe(2);
      const repairs = model.requests.filter((r) => lastMessageText(r).includes("found something failing"));
      const first = repairs[0];
      if (first === undefined) throw new Error("the repair step never reached the model");
      expect(lastMessageText(first)).toContain("error: the config is missing");
      const saved = await history(runIdIn(result.stdout + result.stderr));
      expect(saved.steps.filter((s) => s.path === "repair").map((s) => s.status)).toEqual(["succeeded"]);
      model.assertNoErrors();
    },
    SLOW,
  );
});

describe("piw run monitor with the read-only inspector", () => {
  it(
    "judges the goal in an isolated session, and refuses a proposal the input does not allow",
    async () => {
      const inspection = (goal: string, next: string, action: string | null) =>
        toolCall("workflow", {
          action: "submit",
          output: {
            goal,
            summary: `the goal is ${goal}`,
            evidence: [],
            failure: null,
            stopWhenHolds: false,
            next,
            action,
          },
        });
      const ASKED = "Check whether this goal is met now";
      model.replyOnce(whenLastMessageContains(ASKED, inspection("pending", "act", "write the report")));
      model.replyOnce(whenLastMessageContains("propose wait", inspection("pending", "wait", null)));
      model.reply(whenLastMessageContains(ASKED, inspection("met", "wait", null)));
      const input = JSON.stringify({ task: "the weekly report is written", everyMinutes: 0.01, allow: [] });
      const result = await piw(home, ["run", "monitor", "--input-json", input], { cwd: dir, env });
      expect(result.code).toBe(0);
      const saved = await history(runIdIn(result.stdout));
      expect(saved.steps.filter((s) => s.path === "inspect").map((s) => s.status)).toEqual([
        "succeeded",
        "succeeded",
      ]);
      expect(saved.steps.find((s) => s.path === "inspect")?.output).toMatchObject({
        goal: "pending",
        next: "wait",
      });
      expect(saved.steps.some((s) => s.path === "act")).toBe(false);
      expect(saved.steps.find((s) => s.path === "finish")?.output).toMatchObject({ met: true, checks: 2 });
      const refused = model.requests.find((r) => lastMessageText(r).includes("propose wait"));
      if (refused === undefined) throw new Error("the proposal to act was never refused");
      expect(lastMessageText(refused)).toContain(
        "this monitor may not act (its input allows: only watching)",
      );
      model.assertNoErrors();
    },
    SLOW,
  );
});
