import { afterEach, describe, expect, it } from "vitest";
import {
  lastMessageText,
  piwMessages,
  piwWorlds,
  queuedRunId,
  text,
  toolCall,
  whenLastMessageContains,
} from "@piw/test-kit";

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
      prompt: ({ outputs }) => \`CHECK-STEP: is \${JSON.stringify(outputs.plan)} sound? Submit { ok: boolean }.\`,
      output: z.object({ ok: z.boolean() }),
    }),
  },
  edges: { plan: { to: "check" }, check: { to: "done" } },
});
`;

const worlds = piwWorlds();
afterEach(() => worlds.close());

describe("a Pi-started run that mixes conversation and isolated agent steps", () => {
  it("runs the default step in the conversation and the isolated one in a fresh SDK session in the worker", async () => {
    const world = await worlds.start({ workflows: { mixed: MIXED } });
    const { model, pi } = world;
    model.reply(
      whenLastMessageContains(
        "please plan",
        toolCall("workflow", { action: "start", workflow: "mixed", task: "t" }),
      ),
    );
    model.reply(whenLastMessageContains("queued (run", text("Queued.")));
    model.reply(
      whenLastMessageContains(
        "PLAN-STEP",
        toolCall("workflow", { action: "submit", output: { steps: ["a"] } }),
      ),
    );
    model.reply(whenLastMessageContains("Accepted: workflow step plan", text("Plan submitted.")));
    model.reply(
      whenLastMessageContains("CHECK-STEP", toolCall("workflow", { action: "submit", output: { ok: true } })),
    );
    model.reply(whenLastMessageContains("Final output", text("All done.")));

    await pi.promptAndSettle("please plan");
    const started = model.requests.find((r) => lastMessageText(r).includes("queued (run"));
    const runId = queuedRunId(lastMessageText(started as NonNullable<typeof started>));
    const done = await world.waitForRun(runId, (view) => view.status === "done", 90_000);
    expect(done.outcome).toBe("completed");
    expect(done.nodes.map((n) => [n.path, n.state])).toEqual([
      ["plan", "succeeded"],
      ["check", "succeeded"],
    ]);

    const check = model.requests.find((r) => lastMessageText(r).includes("CHECK-STEP"));
    // A fresh context: nothing of the conversation (its first prompt, the plan step) is in it.
    expect(JSON.stringify(check?.messages)).not.toContain("please plan");
    expect(JSON.stringify(check?.messages)).not.toContain("PLAN-STEP");
    // Pi's read-only tools and the session's own submit tool; not the conversation's tools.
    expect(check?.tools.map((t) => t.function.name).sort()).toEqual([
      "find",
      "grep",
      "ls",
      "read",
      "workflow",
    ]);
    // Only the conversation step was delivered to the Pi session.
    const prompts = (await piwMessages(pi)).filter((m) => m.details.kind === "step_prompt");
    expect(prompts).toHaveLength(1);
    model.assertNoErrors();
  }, 150_000);
});
