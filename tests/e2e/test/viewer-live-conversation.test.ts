import { execFileSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import {
  type ModelReply,
  type PiwWorld,
  queuedRunId,
  REPO,
  startPiwWorld,
  text,
  toolCall,
  whenLastMessageContains,
} from "@piw/test-kit";

// The viewer's Conversation tab while a step runs: the real `pi` with the scripted model, which
// streams a step's reply and holds it half sent. The tab shows the text streamed so far, before the
// step ends, for a step in the Pi conversation and for an isolated step; then the settled messages.

const LIVE = `import { agent, defineWorkflow } from "piw";
import { z } from "zod";

export default defineWorkflow({
  name: "live",
  input: z.object({ task: z.string() }),
  startAt: "plan",
  nodes: {
    plan: agent({
      prompt: "PLAN-STEP: submit { steps: string[] }.",
      output: z.object({ steps: z.array(z.string()).min(1) }),
    }),
    check: agent({
      session: "isolated",
      prompt: "CHECK-STEP: submit { ok: boolean }.",
      output: z.object({ ok: z.boolean() }),
    }),
  },
  edges: { plan: { to: "check" }, check: { to: "done" } },
});
`;

const server = `piw-live-${process.pid}`;
const SHOTS = join(REPO, ".reports", "viewer-conversation");
const tmux = (...args: string[]) => execFileSync("tmux", ["-L", server, ...args], { encoding: "utf8" });
const quote = (word: string) => `'${word.replaceAll("'", "'\\''")}'`;
const screen = () => tmux("capture-pane", "-p", "-t", "viewer");

async function waitForScreen(what: string, check: (text: string) => boolean, timeoutMs = 30_000) {
  const until = Date.now() + timeoutMs;
  let last = "";
  while (Date.now() < until) {
    last = screen();
    if (check(last)) return last;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`timed out waiting for ${what}; the screen was:\n${last}`);
}

/** A gate the test opens: the model's reply waits at it, half streamed. */
function gate(): { until: Promise<void>; open: () => void } {
  let open = () => {};
  const until = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { until, open };
}

/** A submit whose text streams in small pieces and stops after `first` until the gate opens. */
function heldSubmit(first: string, rest: string, output: unknown, until: Promise<void>): ModelReply {
  return {
    type: "tool_calls",
    text: `${first}${rest}`,
    calls: [{ name: "workflow", arguments: { action: "submit", output } }],
    stream: { chunkSize: 6, delayMs: 20, holdAfter: { chars: first.length, until } },
  };
}

let world: PiwWorld | undefined;
afterEach(async () => {
  try {
    tmux("kill-server");
  } catch {
    // No viewer was started.
  }
  await world?.close();
  world = undefined;
});

describe("the viewer's conversation tab, live", () => {
  it("shows a running step's streamed text before the step ends, in the Pi conversation and isolated", async () => {
    world = await startPiwWorld({ workflows: { live: LIVE } });
    const { model, pi } = world;
    const plan = gate();
    const check = gate();
    model.reply(
      whenLastMessageContains(
        "please plan",
        toolCall("workflow", { action: "start", workflow: "live", task: "t" }),
      ),
    );
    model.reply(whenLastMessageContains("queued (run", text("Queued.")));
    model.reply(
      whenLastMessageContains(
        "PLAN-STEP",
        heldSubmit("PLAN-LIVE: reading the task, ", "PLAN-REST: done.", { steps: ["a"] }, plan.until),
      ),
    );
    model.reply(whenLastMessageContains("Accepted: workflow step plan", text("PLAN-DONE")));
    model.reply(
      whenLastMessageContains(
        "CHECK-STEP",
        heldSubmit("CHECK-LIVE: looking it over, ", "CHECK-REST: fine.", { ok: true }, check.until),
      ),
    );
    model.reply(whenLastMessageContains("Final output", text("All done.")));

    await pi.prompt("please plan");
    const queued = await model.waitForRequest(
      (r) => JSON.stringify(r.messages).includes("queued (run"),
      60_000,
    );
    const runId = queuedRunId(JSON.stringify(queued.messages));

    const env = {
      ...world.env,
      TSX_TSCONFIG_PATH: join(REPO, "tsconfig.json"),
      LANG: "C.UTF-8",
      NO_COLOR: "1",
    };
    const command = [
      "env",
      ...Object.entries(env).map(([name, value]) => `${name}=${value}`),
      process.execPath,
      "--import",
      join(REPO, "node_modules", "tsx", "dist", "loader.mjs"),
      join(REPO, "apps/piw/src/main.ts"),
      "view",
      runId,
    ]
      .map(quote)
      .join(" ");
    tmux("new-session", "-d", "-s", "viewer", "-x", "160", "-y", "50", `${command}; sleep 600`);
    await waitForScreen("the run", (s) => s.includes("1 Steps"));
    // The first node, then the Conversation tab.
    for (let i = 0; i < 3; i += 1) tmux("send-keys", "-t", "viewer", "Up");
    tmux("send-keys", "-t", "viewer", "2");

    // The conversation step's reply, half streamed: shown while the step runs, the rest not yet sent.
    const planLive = await waitForScreen(
      "the plan step's streamed text",
      (s) => s.includes("PLAN-LIVE"),
      60_000,
    );
    expect(planLive).toContain("in the Pi conversation  (running)");
    expect(planLive).toContain("PLAN-STEP: submit { steps: string[] }.");
    expect(planLive).not.toContain("PLAN-REST");
    plan.open();
    const planDone = await waitForScreen(
      "the plan step settled",
      (s) => s.includes("PLAN-REST") && s.includes("✓ accepted"),
    );
    expect(planDone).not.toContain("(running)");

    // The isolated step: its session's text as it streams, then its saved transcript.
    tmux("send-keys", "-t", "viewer", "Down");
    const checkLive = await waitForScreen(
      "the check step's streamed text",
      (s) => s.includes("CHECK-LIVE"),
      60_000,
    );
    expect(checkLive).toContain("isolated session  (running)");
    expect(checkLive).toContain("CHECK-STEP: submit { ok: boolean }.");
    expect(checkLive).not.toContain("CHECK-REST");
    check.open();
    await world.waitForRun(runId, (view) => view.status === "done", 90_000);
    const checkDone = await waitForScreen(
      "the check step settled",
      (s) => s.includes("CHECK-REST") && s.includes("✓ accepted"),
    );
    expect(checkDone).not.toContain("(running)");
    mkdirSync(SHOTS, { recursive: true });
    writeFileSync(join(SHOTS, "conversation-step-live.txt"), planLive);
    writeFileSync(join(SHOTS, "isolated-step-live.txt"), checkLive);
    model.assertNoErrors();
  }, 180_000);
});
