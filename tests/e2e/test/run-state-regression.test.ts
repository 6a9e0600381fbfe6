import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { RunView } from "@piw/protocol";
import { afterEach, describe, expect, it } from "vitest";
import {
  HOST_COMMAND,
  lastMessage,
  lastMessageText,
  type ModelRequest,
  piwMessages,
  piwWorlds,
  queuedRunId,
  text,
  toolCall,
} from "@piw/test-kit";

/**
 * The host the extension starts, with its stderr (the host log) kept in `$PIW_HOME/host.log`.
 * `exec` keeps the host's own PID in the lock.
 */
const LOGGED_HOST_COMMAND = [
  "/bin/sh",
  "-c",
  'umask 077; mkdir -p "$PIW_HOME"; exec "$0" "$@" 2>>"$PIW_HOME/host.log"',
  ...HOST_COMMAND,
];

/** Identity-rule composition: one managed action mounted directly and again inside an included child. */
function workflows(dir: string): Record<string, string> {
  const effectLog = JSON.stringify(join(dir, "effects.log"));
  const failFlag = JSON.stringify(join(dir, "fail.flag"));
  const holdFlag = JSON.stringify(join(dir, "hold.flag"));
  return {
    workspace: `import { appendFileSync } from "node:fs";
import { action, type ActionContext, defineWorkflow } from "piw";
import { z } from "zod";

type Input = { dir: string };

export default defineWorkflow({
  name: "workspace",
  input: z.object({ dir: z.string() }),
  startAt: "inspect",
  exits: ["ready"],
  nodes: {
    inspect: action({
      run: ({ input, node, effects }: ActionContext<Input>) =>
        effects.idempotent("workspace.inspect", { dir: input.dir }, (request) => {
          // The side effect: one line each time the effect really runs.
          const line = { dir: (request as Input).dir, path: node.path, visit: node.visit, launch: process.env.PIW_LAUNCH_ID ?? null };
          appendFileSync(${effectLog}, JSON.stringify(line) + "\\n");
          return { clean: true };
        }),
    }),
  },
  edges: { inspect: { to: "ready" } },
});
`,
    documentation: `import { compute, defineWorkflow, includeWorkflow, type ScopeContext } from "piw";
import { z } from "zod";
import workspace from "./workspace.workflow.ts";

export default defineWorkflow({
  name: "documentation",
  input: z.object({ topic: z.string() }),
  startAt: "workspace",
  exits: ["written"],
  includes: {
    workspace: includeWorkflow(workspace, {
      input: ({ input }: ScopeContext<{ topic: string }>) => ({ dir: \`docs/\${input.topic}\` }),
    }),
  },
  nodes: { write: compute({ run: () => ({ pages: 1 }) }) },
  edges: { "workspace.ready": { to: "write" }, write: { to: "written" } },
});
`,
    release: `import { existsSync } from "node:fs";
import { compute, defineWorkflow, includeWorkflow, type ScopeContext, WorkflowError } from "piw";
import { z } from "zod";
import documentation from "./documentation.workflow.ts";
import workspace from "./workspace.workflow.ts";

export default defineWorkflow({
  name: "release",
  input: z.object({ repo: z.string() }),
  startAt: "workspace",
  includes: {
    workspace: includeWorkflow(workspace, { input: ({ input }: ScopeContext<{ repo: string }>) => ({ dir: input.repo }) }),
    documentation: includeWorkflow(documentation, { input: { topic: "api" } }),
  },
  nodes: {
    // After both managed actions: fails while the fail flag exists, waits while the hold flag exists.
    gate: compute({
      run: async ({ signal }) => {
        if (existsSync(${failFlag})) throw new WorkflowError("forced failure after the managed actions");
        while (existsSync(${holdFlag}) && !signal.aborted) await new Promise((r) => setTimeout(r, 50));
        return "open";
      },
    }),
    ship: compute({ run: () => "shipped" }),
  },
  edges: {
    "workspace.ready": { to: "documentation" },
    "documentation.written": { to: "gate" },
    gate: { to: "ship" },
    ship: { to: "done" },
  },
});
`,
  };
}

interface EffectLine {
  dir: string;
  path: string;
  visit: number;
  launch: string | null;
}

const worlds = piwWorlds();
afterEach(() => worlds.close());

const whenLast = (needle: string, reply: ReturnType<typeof text>) => (r: ModelRequest) =>
  lastMessageText(r).includes(needle) ? reply : undefined;

/** Every node as [path, state, visits, attempt], by path (the view lists them in manifest order). */
const nodeRows = (view: RunView) =>
  view.nodes
    .map((node) => [node.path, node.state, node.visits, node.attempt] as const)
    .sort((a, b) => a[0].localeCompare(b[0]));

describe("the execution-identity, clean-restart and progress rules in a real Pi session", () => {
  it("a composed workflow fails after its managed actions, restarts clean, pauses and cancels without a worker loop", async () => {
    // The flags and the effect log live in a folder the test owns, beside the world.
    const world = await worlds.start({ env: { PIW_HOST_COMMAND: JSON.stringify(LOGGED_HOST_COMMAND) } });
    const dir = join(world.root, "flags");
    const files = workflows(dir);
    for (const [name, source] of Object.entries(files)) world.writeWorkflow(name, source);
    const { model, pi } = world;
    const effectLog = join(dir, "effects.log");
    const failFlag = join(dir, "fail.flag");
    const holdFlag = join(dir, "hold.flag");
    const readEffects = (): EffectLine[] =>
      existsSync(effectLog)
        ? readFileSync(effectLog, "utf8")
            .trim()
            .split("\n")
            .filter(Boolean)
            .map((line) => JSON.parse(line) as EffectLine)
        : [];
    mkdirSync(dir, { recursive: true });
    writeFileSync(failFlag, "fail\n");

    model.reply(
      whenLast(
        "ship the release",
        toolCall("workflow", { action: "start", workflow: "release", input: { repo: "piw" } }),
      ),
    );
    model.reply(whenLast("queued (run", text("QUEUED: it starts when I am done.")));
    model.reply((r) => {
      const match = /^restart run (\S+)$/.exec(lastMessageText(r));
      return match ? toolCall("workflow", { action: "restart", runId: match[1] }) : undefined;
    });
    model.reply((r) => {
      const match = /^pause run (\S+)$/.exec(lastMessageText(r));
      return match ? toolCall("workflow", { action: "pause", runId: match[1] }) : undefined;
    });
    model.reply((r) => {
      const match = /^cancel run (\S+)$/.exec(lastMessageText(r));
      return match ? toolCall("workflow", { action: "cancel", runId: match[1] }) : undefined;
    });
    model.reply(whenLast("Pause requested for run", text("PAUSED: it stops at the current step.")));
    model.reply(whenLast("cancelled.", text("CANCELLED.")));
    model.reply(whenLast("You started this run", text("FOLLOW-UP: the release failed.")));

    // --- The first run fails after both managed actions.
    await pi.promptAndSettle("ship the release");
    const queued = model.requests.find(
      (r) => lastMessage(r)?.role === "tool" && lastMessageText(r).includes("queued (run"),
    );
    const firstRunId = queuedRunId(lastMessageText(queued as ModelRequest));
    const failed = await world.waitForRun(firstRunId, (view) => view.status === "failed", 60_000);
    expect(failed.outcome).toBe("failed");
    expect(failed.error?.message).toContain("forced failure after the managed actions");
    expect(nodeRows(failed)).toEqual([
      ["documentation/workspace/inspect", "succeeded", 1, 1],
      ["documentation/write", "succeeded", 1, 1],
      ["gate", "failed", 1, 1],
      ["ship", "pending", 0, 0],
      ["workspace/inspect", "succeeded", 1, 1],
    ]);
    // Both mounts of the action ran their effect once, under their own full paths: no collision.
    const firstEffects = readEffects();
    expect(firstEffects.map((e) => [e.dir, e.path, e.visit])).toEqual([
      ["piw", "workspace/inspect", 1],
      ["docs/api", "documentation/workspace/inspect", 1],
    ]);
    expect(new Set(firstEffects.map((e) => e.launch)).size).toBe(1);
    const firstError = failed.error;

    // The model started the failed run: its terminal note starts one follow-up turn, which settles
    // before the next prompt (a prompt sent during it would be steered into that turn).
    await pi.waitForEvent(
      (e) =>
        e.type === "message_start" &&
        (e.message as { role?: string } | undefined)?.role === "custom" &&
        JSON.stringify(e).includes(`failed (run ${firstRunId})`),
      { timeoutMs: 60_000 },
    );
    await pi.waitForIdle({ timeoutMs: 30_000 });
    expect(model.requests.filter((r) => lastMessageText(r).includes("You started this run"))).toHaveLength(1);

    // --- Restart from Pi (the tool's restart action): it begins clean at the first node.
    rmSync(failFlag);
    writeFileSync(holdFlag, "hold\n");
    await pi.promptAndSettle(`restart run ${firstRunId}`);
    const restartResult = model.requests.find(
      (r) => lastMessage(r)?.role === "tool" && lastMessageText(r).includes(`a restart of run ${firstRunId}`),
    );
    const toolResults = model.requests
      .filter((r) => lastMessage(r)?.role === "tool")
      .map((r) => lastMessageText(r).slice(0, 300));
    expect(
      restartResult,
      `the restart tool result reached the model; tool results: ${toolResults.join(" | ")}`,
    ).toBeDefined();
    const restartRunId = queuedRunId(lastMessageText(restartResult as ModelRequest));
    expect(restartRunId).not.toBe(firstRunId);
    const holding = await world.waitForRun(
      restartRunId,
      (view) => view.nodes.find((node) => node.path === "gate")?.state === "running",
      60_000,
    );
    expect(holding.originCommand).toBe("restart");
    expect(holding.parentRunId).toBe(firstRunId);
    expect(holding.restartNumber).toBe(1);
    // Fresh visits from 1, attempt 1; nothing carried over from the parent.
    expect(nodeRows(holding)).toEqual([
      ["documentation/workspace/inspect", "succeeded", 1, 1],
      ["documentation/write", "succeeded", 1, 1],
      ["gate", "running", 1, 1],
      ["ship", "pending", 0, 0],
      ["workspace/inspect", "succeeded", 1, 1],
    ]);
    // The parent's effects were not adopted: each effect ran again exactly once, in the new run.
    const allEffects = readEffects();
    expect(allEffects).toHaveLength(4);
    const restartEffects = allEffects.slice(2);
    expect(restartEffects.map((e) => [e.dir, e.path, e.visit])).toEqual([
      ["piw", "workspace/inspect", 1],
      ["docs/api", "documentation/workspace/inspect", 1],
    ]);
    expect(new Set(restartEffects.map((e) => e.launch)).size).toBe(1);
    expect(restartEffects[0]?.launch).not.toBe(firstEffects[0]?.launch);

    // --- Pause: the run parks at the next node boundary once the gate finishes.
    await pi.promptAndSettle(`pause run ${restartRunId}`);
    rmSync(holdFlag);
    const parked = await world.waitForRun(restartRunId, (view) => view.status === "parked", 60_000);
    expect(parked.recoveryReason?.code).toBe("paused");
    expect(parked.nodes.find((node) => node.path === "ship")?.state).toBe("pending");

    // --- Cancel: it commits, and no worker runs for it afterwards.
    await pi.promptAndSettle(`cancel run ${restartRunId}`);
    const cancelled = await world.waitForRun(restartRunId, (view) => view.status === "cancelled", 30_000);
    expect(cancelled.outcome).toBe("cancelled");
    const host = await world.host();
    const deadline = Date.now() + 5_000;
    let workers = (await host.call("host.status", {})).workers;
    while (workers.some((w) => w.runId === restartRunId) && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 100));
      workers = (await host.call("host.status", {})).workers;
    }
    expect(workers.filter((w) => w.runId === restartRunId || w.runId === firstRunId)).toEqual([]);
    // Still cancelled a moment later, with no launch after the cancel.
    await new Promise((r) => setTimeout(r, 1_000));
    const after = (await host.call("runs.get", { runId: restartRunId })) as RunView;
    expect(after.status).toBe("cancelled");
    expect(after.currentWork).toEqual({ kind: "none" });

    // The first run's terminal facts are still readable, unchanged.
    const first = (await host.call("runs.get", { runId: firstRunId })) as RunView;
    expect(first.status).toBe("failed");
    expect(first.error).toEqual(firstError);

    // The effects ran exactly once per run: nothing more after the cancel.
    expect(readEffects()).toHaveLength(4);

    // The host log: one launch per run, never a relaunch.
    const hostLog = readFileSync(join(world.stateDir, "host.log"), "utf8");
    const launches = (runId: string) =>
      hostLog.split("\n").filter((line) => line.includes(`run ${runId}: launched worker`));
    expect(launches(firstRunId), hostLog).toHaveLength(1);
    expect(launches(restartRunId), hostLog).toHaveLength(1);
    expect(launches(restartRunId)[0]).toContain("for restart");
    expect(hostLog).not.toMatch(/relaunch/);

    // Pi saw the failure and the cancellation once each.
    const messages = await piwMessages(pi);
    const terminals = messages.filter((m) => m.details.kind === "terminal");
    expect(terminals.map((m) => m.details.runId)).toEqual([firstRunId, restartRunId]);
    expect(terminals[0]?.text).toContain(`failed (run ${firstRunId})`);
    expect(terminals[1]?.text).toContain(`was cancelled (run ${restartRunId})`);
    const ids = messages.map((m) => m.details.piwMessageId);
    expect(new Set(ids).size).toBe(ids.length);
    model.assertNoErrors();
  }, 120_000);
});
