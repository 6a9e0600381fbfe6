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

const PAIR = `import { agent, defineWorkflow, type NodeContext } from "piw";
import { z } from "zod";

export default defineWorkflow({
  name: "pair",
  input: z.object({ task: z.string() }),
  startAt: "plan",
  presentationPrompt: "Tell the user what was planned and built, in plain words.",
  nodes: {
    plan: agent({
      prompt: ({ input }: NodeContext<{ task: string }>) => \`PLAN-STEP for \${input.task}: submit { steps: string[] } with at least one step.\`,
      output: z.object({ steps: z.array(z.string()).min(1) }),
    }),
    build: agent({
      prompt: ({ outputs }) => \`BUILD-STEP: carry out \${JSON.stringify(outputs.plan)} and submit { result: string }.\`,
      output: z.object({ result: z.string() }),
    }),
  },
  edges: { plan: { to: "build" }, build: { to: "done" } },
});
`;

const worlds = piwWorlds();
afterEach(() => worlds.close());

describe("agent steps in a real Pi session", () => {
  it("are completed by the model through submit, an invalid output is corrected in the same turn, and a presentation turn ends the run", async () => {
    const world = await worlds.start({ workflows: { pair: PAIR } });
    const { model, pi } = world;
    model.reply(
      whenLastMessageContains(
        "please make tea",
        toolCall("workflow", { action: "start", workflow: "pair", task: "tea" }),
      ),
    );
    // The initiating turn is still running while the model answers the tool result, and it streams
    // slowly: nothing of the run may start before this turn has settled (the idle-activation rule).
    let initiatingTurnLastReply = 0;
    model.reply((request) => {
      if (!lastMessageText(request).includes("queued (run")) return undefined;
      initiatingTurnLastReply = Date.now();
      return text("Queued; it starts when I am done.", { chunkSize: 4, delayMs: 60 });
    });
    model.reply(
      whenLastMessageContains("PLAN-STEP", toolCall("workflow", { action: "submit", output: { steps: [] } })),
    );
    model.reply(
      whenLastMessageContains(
        "Output rejected",
        toolCall("workflow", { action: "submit", output: { steps: ["boil water"] } }),
      ),
    );
    model.reply(
      whenLastMessageContains(
        "Accepted: workflow step plan",
        // A second submit in the same turn is answered at once: that step is over.
        toolCall("workflow", { action: "submit", output: { steps: ["again"] } }),
      ),
    );
    model.reply(whenLastMessageContains("is already succeeded", text("Plan submitted.")));
    model.reply(
      whenLastMessageContains(
        "BUILD-STEP",
        toolCall("workflow", { action: "submit", output: { result: "tea made" } }),
      ),
    );
    model.reply(whenLastMessageContains("Accepted: workflow step build", text("Build submitted.")));
    model.reply(whenLastMessageContains("Final output", text("PRESENTED: your tea is ready.")));

    await pi.promptAndSettle("please make tea");
    const started = model.requests.find((r) => lastMessageText(r).includes("queued (run"));
    expect(started).toBeDefined();
    const runId = queuedRunId(lastMessageText(started as NonNullable<typeof started>));

    const done = await world.waitForRun(runId, (view) => view.status === "done", 60_000);
    expect(initiatingTurnLastReply).toBeGreaterThan(0);
    expect(done.startedAt).toBeGreaterThan(initiatingTurnLastReply);
    // The last reply streams for ~0.5 s: a node started during the turn would start before it settled.
    const firstNodeStart = Math.min(...done.nodes.map((node) => node.startedAt ?? Number.POSITIVE_INFINITY));
    expect(firstNodeStart).toBeGreaterThanOrEqual(initiatingTurnLastReply + 400);
    expect(done.outcome).toBe("completed");
    expect(done.nodes.map((node) => [node.path, node.state, node.visits])).toEqual([
      ["plan", "succeeded", 1],
      ["build", "succeeded", 1],
    ]);

    // The presentation follow-up reaches the model, which answers in plain words.
    await model.waitForRequest((r) => lastMessageText(r).includes("Final output"), 30_000);
    await pi.waitForEvent(
      (e) => e.type === "message_end" && JSON.stringify(e).includes("PRESENTED: your tea is ready."),
      { timeoutMs: 30_000 },
    );

    // The step prompt ends with the generated contract: the step, its output's JSON Schema, how to submit.
    const planPrompt = model.requests.find((r) => lastMessageText(r).includes("PLAN-STEP"));
    const contract = lastMessageText(planPrompt as NonNullable<typeof planPrompt>);
    expect(contract).toContain("Workflow step contract");
    expect(contract).toMatch(/Step: plan \(path plan, visit 1, attempt 1, run [^)]+\)/);
    expect(contract).toContain(
      '{"type":"object","properties":{"steps":{"minItems":1,"type":"array","items":{"type":"string"}}},"required":["steps"]}',
    );
    expect(contract).toContain('call the workflow tool with {"action":"submit","output":<the output>}');

    // The rejection went back to the model in the same turn as the first submission, naming the field.
    const rejection = model.requests.find((r) => lastMessageText(r).includes("Output rejected"));
    expect(lastMessageText(rejection as NonNullable<typeof rejection>)).toContain(
      "Output rejected: steps: too small (at least 1).",
    );

    const messages = await piwMessages(pi);
    const kinds = messages.map((m) => m.details.kind);
    expect(kinds.filter((k) => k === "step_prompt")).toHaveLength(2);
    expect(kinds).toContain("terminal");
    expect(kinds).toContain("presentation");
    // Every piw message is delivered once.
    const ids = messages.map((m) => m.details.piwMessageId);
    expect(new Set(ids).size).toBe(ids.length);
    model.assertNoErrors();

    // The footer status was rendered from the host's view.
    const statuses = pi.events.filter((e) => e.type === "extension_ui_request" && e.method === "setStatus");
    const texts = statuses.map((e) => String(e.statusText));
    expect(texts.at(-1), texts.join(" | ")).toMatch(/^wf pair \[completed\]/);
    expect(texts).toContain("wf pair [running] plan");
  }, 120_000);
});
