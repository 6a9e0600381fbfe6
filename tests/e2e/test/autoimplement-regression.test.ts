import { execFileSync } from "node:child_process";
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { type RunHistory, type RunView, WORKSPACE_EFFECT } from "@piw/protocol";
import { afterEach, describe, expect, it } from "vitest";
import {
  HOST_COMMAND,
  lastMessageText,
  lastToolResultText,
  type PiSession,
  piwMessages,
  type PiwWorld,
  type RpcRecord,
  startPiwWorld,
  toolCall,
  whenLastMessageContains,
} from "@piw/test-kit";
import { expectViewsAgree, nodeStates, piw, statusJson } from "./views-agree.js";

// The whole run-state story in a real Pi session, where an included built-in prepares its own
// workspace beside its parent's (autoimplement with autodoc inside; and a workflow that includes
// autodoc beside a worktree node of the same local name): the two preparations get distinct effect
// identities (the execution-identity rule), the first run fails after them, a restart begins clean
// at the first node (the clean-restart rule), it is paused and then cancelled from a shell with no
// worker alive (the progress rule), and Pi's widget, `piw status --json` and the viewer agree at
// each stage.

/** The host the extension starts, with its log kept in `$PIW_HOME/host.log` (`exec` keeps its PID in the lock). */
const LOGGED_HOST_COMMAND = [
  "/bin/sh",
  "-c",
  'umask 077; mkdir -p "$PIW_HOME"; exec "$0" "$@" 2>>"$PIW_HOME/host.log"',
  ...HOST_COMMAND,
];

/**
 * A first node that reports any output of its own it can see before it runs, its own worktree under
 * the same local name autodoc gives its one (`worktree`), then autodoc, then a gate that holds while
 * the hold flag exists, then a last step a pause can stop before.
 */
function shipWorkflow(holdFlag: string): string {
  return `import { existsSync } from "node:fs";
import { builtinWorkflow, compute, defineWorkflow, includeWorkflow, type ScopeContext, workspace } from "piw";
import { z } from "zod";

type Input = { task: string };

export default defineWorkflow({
  name: "ship",
  input: z.object({ task: z.string() }),
  textInput: "task",
  startAt: "begin",
  includes: {
    docs: includeWorkflow(builtinWorkflow("autodoc"), {
      input: ({ input }: ScopeContext<Input>) => ({ task: input.task }),
    }),
  },
  nodes: {
    // What the first node sees of itself before it runs: nothing, in a run that carries nothing.
    begin: compute({
      run: ({ outputs }: { outputs: Record<string, unknown> }) => ({ earlier: outputs.begin ?? null }),
    }),
    worktree: workspace({ mode: "worktree", title: "Prepare the ship worktree" }),
    gate: compute({
      run: async ({ signal }) => {
        while (existsSync(${JSON.stringify(holdFlag)}) && !signal.aborted) await new Promise((r) => setTimeout(r, 50));
        return "open";
      },
    }),
    ship: compute({ run: () => "shipped" }),
  },
  edges: {
    begin: { to: "worktree" },
    worktree: { to: "docs" },
    "docs.ready": { to: "gate" },
    "docs.blocked": { to: "gate" },
    gate: { to: "ship" },
    ship: { to: "done" },
  },
});
`;
}

let world: PiwWorld | undefined;
afterEach(async () => {
  await world?.close();
  world = undefined;
});

function isNotice(needle: string): (event: RpcRecord) => boolean {
  return (event) =>
    event.type === "extension_ui_request" &&
    event.method === "notify" &&
    String(event.message).includes(needle);
}

async function historyOf(current: PiwWorld, runId: string): Promise<RunHistory> {
  const host = await current.host();
  const history = (await host.call("runs.history", { runId })) as RunHistory | null;
  if (history === null) throw new Error(`no history for run ${runId}`);
  return history;
}

const workspaceEffects = (history: RunHistory) =>
  history.effects.filter((effect) => effect.effectType === WORKSPACE_EFFECT);

/** A git repository in the project with its `.pi/` kept out of the tree; `files` are committed as one commit. */
function initRepo(project: string, files: Record<string, string>): (...args: string[]) => string {
  const git = (...args: string[]) => execFileSync("git", args, { cwd: project, encoding: "utf8" }).trim();
  git("init", "-q", "-b", "main");
  git("config", "user.email", "dev@example.com");
  git("config", "user.name", "Dev");
  writeFileSync(join(project, ".git", "info", "exclude"), ".pi/\n");
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(dirname(join(project, path)), { recursive: true });
    writeFileSync(join(project, path), content);
  }
  git("add", ...Object.keys(files));
  git("commit", "-qm", "base");
  return git;
}

const RETRY_FILES = {
  "README.md": "# retry\n\n`withRetry(run)` runs `run` three times.\n",
  "retry.ts": "export function withRetry(run: () => void): void {}\n",
};

/** The run ID in a `... queued (run <id>) ...` notice that follows `since`. */
async function queuedNotice(pi: PiSession, since: number): Promise<string> {
  const queued = await pi.waitForEvent(isNotice("queued (run"), { since, timeoutMs: 60_000 });
  const runId = /\(run ([^)]+)\)/.exec(String(queued.message))?.[1];
  if (runId === undefined) throw new Error(`no run ID in ${String(queued.message)}`);
  return runId;
}

/**
 * The restart's history: it began at `first`, every step is its own first visit and attempt, and its
 * workspace effects are new identities at `paths` (none adopted from the parent) on its own branches.
 */
async function expectCleanRestart(
  current: PiwWorld,
  restartRunId: string,
  first: string,
  parentEffectIds: ReadonlySet<string>,
  paths: readonly string[],
): Promise<void> {
  const history = await historyOf(current, restartRunId);
  const ordered = [...history.steps].sort((a, b) => a.startedAt - b.startedAt);
  expect(ordered[0]?.path).toBe(first);
  expect(history.steps.filter((step) => step.visit !== 1 || step.attempt !== 1)).toEqual([]);
  const effects = workspaceEffects(history);
  expect(effects.map((e) => [e.path, e.visit, e.status])).toEqual(paths.map((path) => [path, 1, "settled"]));
  expect(history.effects.filter((e) => parentEffectIds.has(e.effectId))).toEqual([]);
  const branches = effects.map((e) => (e.request as { branch: string }).branch);
  expect(branches.every((branch) => branch.startsWith(`piw/${restartRunId}`))).toBe(true);
  const outer = history.steps.find((step) => step.path === paths[0])?.output;
  expect(outer).toMatchObject({ branch: `piw/${restartRunId}`, adopted: false });
}

/**
 * The parked restart: no worker runs for it; a cancel from a shell commits with none alive and none
 * launched after it; every view agrees; the failed parent's terminal facts read as before; the host
 * launched one worker per run and never relaunched one; Pi saw each run end once.
 */
async function cancelParkedFromShell(
  current: PiwWorld,
  firstRunId: string,
  restartRunId: string,
  firstError: RunView["error"],
): Promise<void> {
  const host = await current.host();
  const until = Date.now() + 10_000;
  let workers = (await host.call("host.status", {})).workers;
  while (workers.some((w) => w.runId === restartRunId) && Date.now() < until) {
    await new Promise((r) => setTimeout(r, 100));
    workers = (await host.call("host.status", {})).workers;
  }
  expect(workers.filter((w) => w.runId === restartRunId)).toEqual([]);

  const cancel = piw(current, ["cancel", restartRunId, "--json"]);
  expect(cancel.code, cancel.stdout).toBe(0);
  const cancelled = await current.waitForRun(restartRunId, (view) => view.status === "cancelled", 30_000);
  expect(cancelled.outcome).toBe("cancelled");
  await new Promise((r) => setTimeout(r, 1_000));
  const after = await expectViewsAgree(
    current,
    restartRunId,
    "cancelled",
    (view) => view.status === "cancelled",
  );
  expect(after.currentWork).toEqual({ kind: "none" });
  expect((await host.call("host.status", {})).workers.filter((w) => w.runId === restartRunId)).toEqual([]);

  const first = statusJson(current, firstRunId);
  expect([first.status, first.outcome, first.error]).toEqual(["failed", "failed", firstError]);

  const hostLog = readFileSync(join(current.stateDir, "host.log"), "utf8");
  const launches = (runId: string) =>
    hostLog.split("\n").filter((line) => line.includes(`run ${runId}: launched worker`));
  expect(launches(firstRunId), hostLog).toHaveLength(1);
  expect(launches(restartRunId), hostLog).toHaveLength(1);
  expect(launches(restartRunId)[0]).toContain("for restart");
  expect(hostLog).not.toMatch(/relaunch/);

  let messages = await piwMessages(current.pi);
  const deliveredBy = Date.now() + 15_000;
  while (messages.filter((m) => m.details.kind === "terminal").length < 2 && Date.now() < deliveredBy) {
    await new Promise((r) => setTimeout(r, 100));
    messages = await piwMessages(current.pi);
  }
  expect(messages.filter((m) => m.details.kind === "terminal").map((m) => m.details.runId)).toEqual([
    firstRunId,
    restartRunId,
  ]);
  const ids = messages.map((m) => m.details.piwMessageId);
  expect(new Set(ids).size).toBe(ids.length);
}

const WORLD_ENV = { PIW_HOST_COMMAND: JSON.stringify(LOGGED_HOST_COMMAND), PIW_ASCII: "1" };

/** The isolated assessor of an included autodoc answers: the README is current. */
const README_CURRENT = whenLastMessageContains(
  "Find the documentation this change makes",
  toolCall("workflow", {
    action: "submit",
    output: {
      documents: [{ path: "README.md", decision: "current", reason: "It describes withRetry.", edits: [] }],
      summary: "The README describes withRetry.",
    },
  }),
);

describe("an included built-in's workspace preparation beside its parent's, through failure, restart, pause and cancel", () => {
  it("autoimplement with autodoc inside: distinct effect identities, a clean restart, a shell cancel without a worker, every view agreeing", async () => {
    world = await startPiwWorld({ env: WORLD_ENV });
    const current = world;
    const { model, pi, project } = current;
    initRepo(project, {
      ...RETRY_FILES,
      "docs/plans/retries.md":
        "# Add a retries option\n\nGive `withRetry` a `retries` option (default 3) and keep README.md in line.\n",
    });
    model.reply(README_CURRENT);
    // The implement step: the provider refuses the first run's turn for good (the run fails after
    // both workspace preparations); the restart's turn keeps working until it is paused.
    let implementPrompts = 0;
    model.reply((r) => {
      if (!lastMessageText(r).includes("Implement the plan in")) return undefined;
      implementPrompts += 1;
      return implementPrompts === 1
        ? { type: "http_error", status: 401, message: "Incorrect API key provided" }
        : toolCall("bash", { command: "sleep 0.3; echo tick" });
    });
    model.reply((r) =>
      lastToolResultText(r)?.includes("tick") === true
        ? toolCall("bash", { command: "sleep 0.3; echo tick" })
        : undefined,
    );

    // --- The first run fails at the implement step, after both managed workspace preparations.
    let since = pi.mark();
    await pi.prompt("/workflow autoimplement docs/plans/retries.md");
    const firstRunId = await queuedNotice(pi, since);
    const failed = await current.waitForRun(firstRunId, (view) => view.status === "failed", 180_000);
    expect(failed.error?.code).toBe("model_unavailable");
    const failedNodes = new Map(nodeStates(failed));
    expect([
      failedNodes.get("worktree"),
      failedNodes.get("documentation/branch"),
      failedNodes.get("implement"),
    ]).toEqual(["succeeded", "succeeded", "failed"]);
    const firstHistory = await historyOf(current, firstRunId);
    const firstEffects = workspaceEffects(firstHistory);
    expect(firstEffects.map((e) => [e.path, e.visit, e.ordinal, e.status])).toEqual([
      ["worktree", 1, 0, "settled"],
      ["documentation/branch", 1, 0, "settled"],
    ]);
    expect(new Set(firstEffects.map((e) => e.effectId)).size).toBe(2);
    expect(firstEffects.map((e) => (e.request as { branch: string }).branch)).toEqual([
      `piw/${firstRunId}`,
      `piw/${firstRunId}-documentation`,
    ]);
    await expectViewsAgree(current, firstRunId, "failed", (view) => view.status === "failed");

    // --- Restart from Pi: a fresh run from the first node.
    since = pi.mark();
    await pi.prompt(`/workflow restart ${firstRunId}`);
    const restartRunId = await queuedNotice(pi, since);
    expect(restartRunId).not.toBe(firstRunId);
    await model.waitForRequest((r) => lastToolResultText(r)?.includes("tick") === true, 180_000);
    const working = await current.waitForRun(
      restartRunId,
      (view) => view.nodes.find((node) => node.path === "implement")?.state === "running",
      30_000,
    );
    expect([working.originCommand, working.parentRunId, working.restartNumber]).toEqual([
      "restart",
      firstRunId,
      1,
    ]);
    await expectCleanRestart(
      current,
      restartRunId,
      "locate",
      new Set(firstHistory.effects.map((e) => e.effectId)),
      ["worktree", "documentation/branch"],
    );
    await expectViewsAgree(
      current,
      restartRunId,
      "restarted",
      (view) =>
        view.status === "running" && view.nodes.find((n) => n.path === "implement")?.state === "running",
    );

    // --- Pause from a shell: the step's live turn is aborted and the run parks.
    since = pi.mark();
    const pause = piw(current, ["pause", restartRunId, "--json"]);
    expect(pause.code, pause.stdout).toBe(0);
    await pi.waitForEvent(
      (e) => e.type === "agent_end" && JSON.stringify(e).includes('"stopReason":"aborted"'),
      {
        since,
        timeoutMs: 30_000,
      },
    );
    const parked = await current.waitForRun(restartRunId, (view) => view.status === "parked", 30_000);
    expect(parked.recoveryReason?.code).toBe("paused");
    await pi.waitForIdle({ timeoutMs: 30_000 });
    await expectViewsAgree(current, restartRunId, "paused", (view) => view.status === "parked");

    // --- Cancel from a shell, with no worker alive.
    await cancelParkedFromShell(current, firstRunId, restartRunId, failed.error);
    expect(implementPrompts).toBe(2);
    model.assertNoErrors();
  }, 420_000);

  it("a workflow that includes autodoc beside its own worktree of the same local name: the same story", async () => {
    world = await startPiwWorld({ env: WORLD_ENV });
    const current = world;
    const { model, pi, project } = current;
    const flags = join(current.root, "flags");
    mkdirSync(flags, { recursive: true });
    const holdFlag = join(flags, "hold.flag");
    current.writeWorkflow("ship", shipWorkflow(holdFlag));
    // One commit: autodoc finds no base to compare with, so the first run fails at autodoc's base
    // step, right after both workspace preparations.
    const git = initRepo(project, RETRY_FILES);
    model.reply(README_CURRENT);

    // --- The first run fails after both managed workspace preparations.
    let since = pi.mark();
    await pi.prompt("/workflow ship document the retry option");
    const firstRunId = await queuedNotice(pi, since);
    const failed = await current.waitForRun(firstRunId, (view) => view.status === "failed", 120_000);
    expect(failed.error?.message).toContain("No base to compare with");
    const failedNodes = new Map(nodeStates(failed));
    expect([
      failedNodes.get("worktree"),
      failedNodes.get("docs/worktree"),
      failedNodes.get("docs/base"),
      failedNodes.get("gate"),
    ]).toEqual(["succeeded", "succeeded", "failed", "pending"]);
    // One identity per full path, though both nodes are called `worktree`: each settled once.
    const firstHistory = await historyOf(current, firstRunId);
    const firstEffects = workspaceEffects(firstHistory);
    expect(firstEffects.map((e) => [e.path, e.visit, e.ordinal, e.status])).toEqual([
      ["worktree", 1, 0, "settled"],
      ["docs/worktree", 1, 0, "settled"],
    ]);
    expect(new Set(firstEffects.map((e) => e.effectId)).size).toBe(2);
    const branches = firstEffects.map((e) => (e.request as { branch: string }).branch);
    expect(branches).toEqual([`piw/${firstRunId}`, `piw/${firstRunId}-docs`]);
    for (const branch of branches) expect(git("branch", "--list", branch)).toContain(branch);
    await expectViewsAgree(current, firstRunId, "failed", (view) => view.status === "failed");

    // --- Restart from Pi, now with a base: a fresh run from the first node, held at the gate.
    git("commit", "-q", "--allow-empty", "-m", "second: gives autodoc a base");
    writeFileSync(holdFlag, "hold\n");
    since = pi.mark();
    await pi.prompt(`/workflow restart ${firstRunId}`);
    const restartRunId = await queuedNotice(pi, since);
    expect(restartRunId).not.toBe(firstRunId);
    const holding = await current.waitForRun(
      restartRunId,
      (view) => view.nodes.find((node) => node.path === "gate")?.state === "running",
      120_000,
    );
    expect([holding.originCommand, holding.parentRunId, holding.restartNumber]).toEqual([
      "restart",
      firstRunId,
      1,
    ]);
    await expectCleanRestart(
      current,
      restartRunId,
      "begin",
      new Set(firstHistory.effects.map((e) => e.effectId)),
      ["worktree", "docs/worktree"],
    );
    // No output of the parent reached the restart: its first node saw none of its own.
    const restartBegin = (await historyOf(current, restartRunId)).steps.find((step) => step.path === "begin");
    expect(restartBegin?.output).toEqual({ earlier: null });
    await expectViewsAgree(
      current,
      restartRunId,
      "restarted",
      (view) => view.status === "running" && view.nodes.find((n) => n.path === "gate")?.state === "running",
    );

    // --- Pause from Pi: the run parks once the gate finishes, before `ship`.
    since = pi.mark();
    await pi.prompt(`/workflow pause ${restartRunId}`);
    await pi.waitForEvent(isNotice(`Pause requested for run ${restartRunId}`), { since, timeoutMs: 30_000 });
    rmSync(holdFlag);
    const parked = await current.waitForRun(restartRunId, (view) => view.status === "parked", 60_000);
    expect(parked.recoveryReason?.code).toBe("paused");
    expect(parked.nodes.find((node) => node.path === "ship")?.state).toBe("pending");
    await expectViewsAgree(current, restartRunId, "paused", (view) => view.status === "parked");

    // --- Cancel from a shell, with no worker alive.
    await cancelParkedFromShell(current, firstRunId, restartRunId, failed.error);
    model.assertNoErrors();
  }, 300_000);
});
