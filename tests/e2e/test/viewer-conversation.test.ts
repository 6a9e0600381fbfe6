import { execFileSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import {
  lastMessage,
  lastMessageText,
  messageText,
  type ModelRequest,
  type PiwWorld,
  queuedRunId,
  REPO,
  startPiwWorld,
  text,
  toolCall,
  whenLastMessageContains,
} from "@piw/test-kit";

// The viewer's Conversation tab on a run the real `pi` ran with the scripted model: a step in the
// Pi conversation (its messages read from Pi's own session file) and an isolated step (its saved
// transcript), each with its prompt, the model's text, a tool call, a rejected and an accepted submit.

const MIXED = `import { agent, defineWorkflow } from "piw";
import { z } from "zod";

export default defineWorkflow({
  name: "mixed",
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

const server = `piw-conv-${process.pid}`;
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

describe("the viewer's conversation tab", () => {
  it("shows a conversation step's and an isolated step's messages", async () => {
    world = await startPiwWorld({ workflows: { mixed: MIXED } });
    const { model, pi } = world;
    model.reply(
      whenLastMessageContains(
        "please plan",
        toolCall("workflow", { action: "start", workflow: "mixed", task: "t" }),
      ),
    );
    model.reply(whenLastMessageContains("queued (run", text("Queued.")));
    // After a rejected submit the model is asked again with the verdict last: it fixes its output.
    const afterRejection = (step: string, output: Record<string, unknown>) => (request: ModelRequest) => {
      const last = lastMessage(request);
      const rejected = last?.role === "tool" && !messageText(last).includes("Accepted");
      return rejected && JSON.stringify(request.messages).includes(step)
        ? toolCall("workflow", { action: "submit", output })
        : undefined;
    };
    // The conversation step: a rejected submit, then an accepted one, then a closing text.
    model.replyOnce(
      whenLastMessageContains("PLAN-STEP", toolCall("workflow", { action: "submit", output: { steps: [] } })),
    );
    model.reply(afterRejection("PLAN-STEP", { steps: ["a"] }));
    model.reply(whenLastMessageContains("Accepted: workflow step plan", text("PLAN-DONE: the plan is in.")));
    // The isolated step: a rejected submit, then an accepted one.
    model.replyOnce(
      whenLastMessageContains(
        "CHECK-STEP",
        toolCall("workflow", { action: "submit", output: { ok: "yes" } }),
      ),
    );
    model.reply(afterRejection("CHECK-STEP", { ok: true }));
    model.reply(whenLastMessageContains("Final output", text("All done.")));

    await pi.promptAndSettle("please plan");
    const started = model.requests.find((r) => lastMessageText(r).includes("queued (run"));
    const runId = queuedRunId(lastMessageText(started as NonNullable<typeof started>));
    const done = await world.waitForRun(runId, (view) => view.status === "done", 90_000);
    expect(done.outcome).toBe("completed");

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
    const plan = await waitForScreen("the conversation step's messages", (s) => s.includes("PLAN-DONE"));
    expect(plan).toContain("in the Pi conversation");
    expect(plan).toContain("PLAN-STEP: submit { steps: string[] }.");
    expect(plan).toContain("✗ rejected");
    expect(plan).toContain("✓ accepted");
    expect(plan).toContain('{"steps":["a"]}');
    expect(plan).not.toContain("please plan");

    tmux("send-keys", "-t", "viewer", "Down");
    const check = await waitForScreen("the isolated step's messages", (s) => s.includes("isolated session"));
    expect(check).toContain("CHECK-STEP: submit { ok: boolean }.");
    expect(check).toContain('{"ok":"yes"}');
    expect(check).toContain("✗ rejected");
    expect(check).toContain("✓ accepted");
    // What the test saw, kept for reviewers (CI keeps .reports) and for docs/viewer.md.
    mkdirSync(SHOTS, { recursive: true });
    writeFileSync(join(SHOTS, "conversation-step.txt"), plan);
    writeFileSync(join(SHOTS, "isolated-step.txt"), check);
    model.assertNoErrors();
  }, 180_000);
});
