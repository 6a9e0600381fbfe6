import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import {
  lastMessageText,
  piwMessages,
  piwWorlds,
  queuedRunId,
  REPO,
  text,
  toolCall,
  whenLastMessageContains,
} from "@piw/test-kit";

const EXAMPLE = readFileSync(join(REPO, "examples", "parallel-review.workflow.ts"), "utf8");

/** Two conversation agent steps and a command in branches of one parallel node. */
const TWO_VOICES = `import { agent, defineWorkflow, parallel, shell } from "piw";
import { z } from "zod";

export default defineWorkflow({
  name: "two-voices",
  startAt: "both",
  nodes: {
    both: parallel({
      branches: {
        first: agent({ prompt: "VOICE-FIRST: submit { said: string }.", output: z.object({ said: z.string() }) }),
        second: agent({ prompt: "VOICE-SECOND: submit { said: string }.", output: z.object({ said: z.string() }) }),
        count: shell({ exec: ["sh", "-c", "echo 3"], parse: ({ stdout }) => Number(stdout) }),
      },
      join: "all",
    }),
  },
  edges: { both: { to: "done" } },
});
`;

const worlds = piwWorlds();
afterEach(() => worlds.close());

describe("parallel branches in a Pi-started run", () => {
  it("starts examples/parallel-review through the workflow tool; lint, tests and the isolated review join and take the ship route", async () => {
    const world = await worlds.start({ workflows: { "parallel-review": EXAMPLE } });
    const { model, pi, project } = world;
    writeFileSync(join(project, "sum.mjs"), "export const sum = (a, b) => a + b;\n");
    writeFileSync(
      join(project, "sum.test.mjs"),
      `import assert from "node:assert/strict";
import { test } from "node:test";
import { sum } from "./sum.mjs";
test("sum adds", () => assert.equal(sum(2, 3), 5));
`,
    );
    model.reply(
      whenLastMessageContains(
        "review my change",
        toolCall("workflow", { action: "start", workflow: "parallel-review", task: "the sum module" }),
      ),
    );
    model.reply(whenLastMessageContains("queued (run", text("Queued.")));
    model.reply(
      whenLastMessageContains(
        "Review the sum module",
        toolCall("workflow", { action: "submit", output: { verdict: "approve", findings: [] } }),
      ),
    );
    model.reply(whenLastMessageContains("Final output", text("All green.")));

    await pi.promptAndSettle("review my change");
    const started = model.requests.find((r) => lastMessageText(r).includes("queued (run"));
    const runId = queuedRunId(lastMessageText(started as NonNullable<typeof started>));
    const done = await world.waitForRun(runId, (view) => view.status === "done", 120_000);
    expect(done.outcome).toBe("completed");
    const states = Object.fromEntries(done.nodes.map((n) => [n.path, n.state]));
    expect(states).toMatchObject({
      checks: "succeeded",
      "checks/lint/lint": "succeeded",
      "checks/tests/tests": "succeeded",
      "checks/review/review": "succeeded",
      verdict: "succeeded",
      ship: "succeeded",
    });
    expect(states.fix).not.toBe("succeeded");

    const host = await world.host();
    const history = await host.call("runs.history", { runId });
    const checks = history?.steps.find((s) => s.path === "checks");
    expect(checks?.output).toEqual({
      lint: { ok: true, broken: [] },
      tests: { passed: true, failing: [] },
      review: { verdict: "approve", findings: [] },
    });
    // The review ran in a fresh session of its own: nothing of the conversation is in its context.
    const review = model.requests.find((r) => lastMessageText(r).includes("Review the sum module"));
    expect(JSON.stringify(review?.messages)).not.toContain("review my change");
    // No step prompt went to the conversation: the one agent branch is isolated.
    const prompts = (await piwMessages(pi)).filter((m) => m.details.kind === "step_prompt");
    expect(prompts).toEqual([]);
    model.assertNoErrors();
  }, 200_000);

  it("runs conversation agent steps of two branches in the one Pi conversation, one after the other", async () => {
    const world = await worlds.start({ workflows: { "two-voices": TWO_VOICES } });
    const { model, pi } = world;
    model.reply(
      whenLastMessageContains(
        "speak twice",
        toolCall("workflow", { action: "start", workflow: "two-voices" }),
      ),
    );
    model.reply(whenLastMessageContains("queued (run", text("Queued.")));
    model.reply(
      whenLastMessageContains(
        "VOICE-FIRST",
        toolCall("workflow", { action: "submit", output: { said: "one" } }),
      ),
    );
    model.reply(
      whenLastMessageContains(
        "VOICE-SECOND",
        toolCall("workflow", { action: "submit", output: { said: "two" } }),
      ),
    );
    model.reply(whenLastMessageContains("Accepted: workflow step", text("Submitted.")));
    model.reply(whenLastMessageContains("Final output", text("Both spoke.")));

    await pi.promptAndSettle("speak twice");
    const started = model.requests.find((r) => lastMessageText(r).includes("queued (run"));
    const runId = queuedRunId(lastMessageText(started as NonNullable<typeof started>));
    const done = await world.waitForRun(runId, (view) => view.status === "done", 120_000);
    expect(done.outcome).toBe("completed");

    const host = await world.host();
    const history = await host.call("runs.history", { runId });
    expect(history?.steps.find((s) => s.path === "both")?.output).toEqual({
      first: { said: "one" },
      second: { said: "two" },
      count: 3,
    });
    // Both step prompts were delivered to the one Pi session, one after the other.
    const prompts = (await piwMessages(pi)).filter((m) => m.details.kind === "step_prompt");
    expect(prompts).toHaveLength(2);
    const [firstPrompt, secondPrompt] = prompts.map((m) => m.text);
    const order = firstPrompt?.includes("VOICE-FIRST")
      ? ["VOICE-FIRST", "VOICE-SECOND"]
      : ["VOICE-SECOND", "VOICE-FIRST"];
    expect(secondPrompt).toContain(order[1]);
    // Taking turns: the later step's prompt reached the model in a context that already holds the
    // earlier step's accepted submission, so the earlier step had ended before the later one began.
    const later = model.requests.find((r) => lastMessageText(r).includes(order[1] as string));
    const context = JSON.stringify(later?.messages);
    expect(context).toContain(order[0]);
    expect(context).toContain("Accepted: workflow step");
    // The conversation's turns of the two steps never overlap: every turn of the earlier step had
    // ended before the first turn of the later one started.
    const turnsOf = (prompt: string) => {
      const path = prompt === "VOICE-FIRST" ? "both/first/first" : "both/second/second";
      return (history?.turns ?? []).filter((t) => t.path === path);
    };
    const [earlierTurns, laterTurns] = [turnsOf(order[0] as string), turnsOf(order[1] as string)];
    expect(earlierTurns.length).toBeGreaterThan(0);
    expect(laterTurns.length).toBeGreaterThan(0);
    const earlierEnd = Math.max(...earlierTurns.map((t) => t.endedAt ?? Number.POSITIVE_INFINITY));
    expect(earlierEnd).toBeLessThanOrEqual(Math.min(...laterTurns.map((t) => t.startedAt)));
    model.assertNoErrors();
  }, 200_000);
});
