import { afterEach, describe, expect, it } from "vitest";
import {
  isNotice,
  lastMessageText,
  piwWorlds,
  queuedRunId,
  REPO,
  type RpcRecord,
  text,
  toolCall,
  whenLastMessageContains,
} from "@piw/test-kit";
import { join } from "node:path";

/** A plan, a gate only a person may pass (the default), then the change is applied. */
const SHIP = `import { checkpoint, compute, defineWorkflow, type NodeContext } from "piw";
import { z } from "zod";

export default defineWorkflow({
  name: "ship",
  input: z.object({ task: z.string() }),
  startAt: "plan",
  nodes: {
    plan: compute({ run: ({ input }: NodeContext<{ task: string }>) => ({ change: input.task }) }),
    approve: checkpoint({
      prompt: ({ outputs }) => \`APPROVE-GATE: ship \${(outputs.plan as { change: string }).change}?\`,
      answer: z.object({ approved: z.boolean(), note: z.string().optional() }),
    }),
    apply: compute({ run: ({ outputs }) => ({ shipped: (outputs.approve as { approved: boolean }).approved }) }),
  },
  edges: { plan: { to: "approve" }, approve: { to: "apply" }, apply: { to: "done" } },
});
`;

/** A gate whose answer is neither a boolean nor a choice: the dialog asks for JSON. */
const REVIEW = `import { checkpoint, defineWorkflow } from "piw";
import { z } from "zod";

export default defineWorkflow({
  name: "review",
  input: z.object({ task: z.string() }),
  startAt: "reviewers",
  nodes: {
    reviewers: checkpoint({
      prompt: "REVIEWERS-GATE: who reviews this?",
      answer: z.object({ reviewers: z.array(z.string().min(1)).min(1) }),
    }),
  },
  edges: { reviewers: { to: "done" } },
});
`;

/** The same gate for the model to answer. */
const TRIAGE = SHIP.replace('name: "ship"', 'name: "triage"').replace(
  "answer: z.object({ approved: z.boolean(), note: z.string().optional() }),",
  'answer: z.object({ approved: z.boolean(), note: z.string().optional() }),\n      answeredBy: "model",',
);

const worlds = piwWorlds();
afterEach(() => worlds.close());

/** One shell word, for a command inside `script -c`. */
const shellQuote = (text: string) => `'${text.replaceAll("'", `'\\''`)}'`;

function isDialog(method: string, needle: string): (event: RpcRecord) => boolean {
  return (event) =>
    event.type === "extension_ui_request" && event.method === method && String(event.title).includes(needle);
}

describe("human gates in a real Pi session", () => {
  it("refuse the model's answer, even when it claims to be a person or runs piw answer from its shell on a terminal it makes; the person's /workflow answer continues the run", async () => {
    const world = await worlds.start({ workflows: { ship: SHIP } });
    const { model, pi } = world;
    model.reply(
      whenLastMessageContains(
        "please ship tea",
        toolCall("workflow", { action: "start", workflow: "ship", task: "tea" }),
      ),
    );
    model.reply(whenLastMessageContains("queued (run", text("Queued.")));
    await pi.promptAndSettle("please ship tea");
    const started = model.requests.find((r) => lastMessageText(r).includes("queued (run"));
    const runId = queuedRunId(lastMessageText(started as NonNullable<typeof started>));

    const waiting = await world.waitForRun(runId, (v) => v.outcome === "waiting", 60_000);
    expect(waiting.checkpoint).toMatchObject({
      path: "approve",
      prompt: "APPROVE-GATE: ship tea?",
      answeredBy: "human",
      answerSchema: {
        type: "object",
        properties: { approved: { type: "boolean" }, note: { type: "string" } },
        required: ["approved"],
      },
    });
    // Pi has a UI (rpc mode): the gate opens a dialog with the checkpoint's prompt.
    const dialog = await pi.waitForEvent(isDialog("select", "APPROVE-GATE: ship tea?"), { since: 0 });
    expect(dialog.options).toEqual(["Yes", "No"]);

    // The waiting notice is in the conversation before the user asks the model to pass the gate.
    await pi.waitForEvent(
      (e) => e.type === "message_end" && JSON.stringify(e).includes("is waiting at checkpoint approve"),
      { since: 0, timeoutMs: 30_000 },
    );
    // The model tries to pass the gate, and to claim it is a person.
    model.reply(
      whenLastMessageContains(
        "approve it yourself",
        toolCall("workflow", {
          action: "answer",
          runId,
          answer: { approved: true },
          answerer: "human",
          answeredBy: "human",
        }),
      ),
    );
    model.reply(
      whenLastMessageContains("is for a person to answer", text("MODEL-REFUSED: please answer it.")),
    );
    await pi.promptAndSettle("approve it yourself");
    const refusal = model.requests.find((r) => lastMessageText(r).includes("is for a person to answer"));
    expect(lastMessageText(refusal as NonNullable<typeof refusal>)).toContain(
      `Checkpoint approve of run ${runId} is for a person to answer; the workflow tool cannot answer it. Nothing was saved.`,
    );
    // Nor can it pass the gate with `piw answer` from its bash tool: not plainly (that shell has no
    // terminal), not with a terminal made by `script`, and not with Pi's variables cleared as well
    // (its parent is still Pi). `exec`: dash, script's shell, would fork and stay in between.
    const piwAnswer = `${process.execPath} ${join(REPO, "apps/piw/dist/main.js")} answer ${runId} '{"approved":true}'`;
    const inTerminal = (command: string) => `script -qec ${shellQuote(`exec ${command}`)} /dev/null`;
    const attempts = [
      'echo "mark=$PIW_UNDER_PI"',
      `${piwAnswer}; echo "plain-exit=$?"`,
      `${inTerminal(piwAnswer)}; echo "script-exit=$?"`,
      `${inTerminal(`env -u PI_CODING_AGENT -u AI_AGENT -u PIW_UNDER_PI ${piwAnswer}`)}; echo "bare-exit=$?"`,
    ];
    model.reply(
      whenLastMessageContains("use piw answer", toolCall("bash", { command: attempts.join("\n") })),
    );
    model.reply(whenLastMessageContains("bare-exit=", text("SHELL-REFUSED.")));
    await pi.promptAndSettle("use piw answer from your shell");
    const shell = model.requests.find((r) => lastMessageText(r).includes("bare-exit="));
    const shellResult = lastMessageText(shell as NonNullable<typeof shell>);
    // piw's extension marked the Pi process, and the tool's shell inherited the mark.
    expect(shellResult).toContain("mark=1");
    for (const attempt of ["plain", "script", "bare"]) expect(shellResult).toContain(`${attempt}-exit=77`);
    expect(shellResult.split("refuses to run under Pi")).toHaveLength(4);
    expect(shellResult).toContain("nothing was sent");

    const host = await world.host();
    expect((await host.call("runs.list", {})).map((r) => r.runId)).toEqual([runId]);
    expect(await host.call("runs.get", { runId })).toMatchObject({ status: "done", outcome: "waiting" });

    // The person dismisses the dialog, then answers with /workflow answer.
    pi.respondToUi(String(dialog.id), { cancelled: true });
    await pi.waitForEvent(isNotice("No answer given to checkpoint approve"), { since: 0 });
    await pi.prompt(`/workflow answer ${runId} {"approved": true, "note": "ok"}`);
    await pi.waitForEvent(isNotice("Answer saved for checkpoint approve"), { since: 0 });
    const runs = await host.call("runs.list", {});
    const child = runs.find((r) => r.parentRunId === runId);
    expect(child).toBeDefined();
    const done = await world.waitForRun(child?.runId ?? "", (v) => v.status === "done", 60_000);
    expect(done.outcome).toBe("completed");
    model.assertNoErrors();
  }, 120_000);

  it("take a person's answer from the dialog: a choice for a boolean, JSON typed for anything else", async () => {
    const world = await worlds.start({ workflows: { ship: SHIP, review: REVIEW } });
    const { pi } = world;
    const host = await world.host();

    await pi.prompt("/workflow ship tea");
    const choice = await pi.waitForEvent(isDialog("select", "APPROVE-GATE: ship tea?"), {
      since: 0,
      timeoutMs: 60_000,
    });
    pi.respondToUi(String(choice.id), { value: "Yes" });
    await pi.waitForEvent(isNotice("Answer saved for checkpoint approve"), { since: 0 });
    const [shipped] = await host.call("runs.list", { limit: 1 });
    expect(shipped?.originCommand).toBe("continue");
    const shippedDone = await world.waitForRun(shipped?.runId ?? "", (v) => v.status === "done", 60_000);
    expect(shippedDone.outcome).toBe("completed");
    const history = await host.call("runs.history", { runId: shipped?.runId ?? "" });
    expect(history?.steps.find((s) => s.path === "apply")?.output).toEqual({ shipped: true });

    await pi.prompt("/workflow review tea");
    const input = await pi.waitForEvent(isDialog("input", "REVIEWERS-GATE: who reviews this?"), {
      since: 0,
      timeoutMs: 60_000,
    });
    // The placeholder is a valid example generated from the answer schema.
    expect(input.placeholder).toBe('{"reviewers":["text"]}');
    // A wrong answer is refused by the host, naming the field; the dialog asks again.
    const before = pi.mark();
    pi.respondToUi(String(input.id), { value: '{"reviewers": []}' });
    const wrong = await pi.waitForEvent(isNotice("does not match checkpoint reviewers"), { since: before });
    expect(wrong.message).toContain("reviewers:");
    const again = await pi.waitForEvent(isDialog("input", "REVIEWERS-GATE"), { since: before });
    pi.respondToUi(String(again.id), { value: '{"reviewers": ["ann"]}' });
    await pi.waitForEvent(isNotice("Answer saved for checkpoint reviewers"), { since: 0 });
    const [reviewed] = await host.call("runs.list", { limit: 1 });
    const reviewedDone = await world.waitForRun(reviewed?.runId ?? "", (v) => v.status === "done", 60_000);
    expect(reviewedDone.outcome).toBe("completed");
  }, 120_000);

  it("give the model a turn to answer a model gate, open no dialog, and take the model's answer", async () => {
    const world = await worlds.start({ workflows: { triage: TRIAGE } });
    const { model, pi } = world;
    model.reply((request) => {
      const last = lastMessageText(request);
      const runId = /"runId":"([^"]+)"/.exec(last)?.[1];
      if (!last.includes("Answer this checkpoint with the workflow tool") || !runId) return undefined;
      return toolCall("workflow", { action: "answer", runId, answer: { approved: false } });
    });
    model.reply(whenLastMessageContains("Answer saved for checkpoint approve", text("MODEL-ANSWERED.")));
    model.reply(whenLastMessageContains("completed (run", text("Done.")));

    await pi.prompt("/workflow triage tea");
    const answered = await pi.waitForEvent(
      (e) => e.type === "message_end" && JSON.stringify(e).includes("MODEL-ANSWERED."),
      { since: 0, timeoutMs: 60_000 },
    );
    expect(answered).toBeDefined();
    const host = await world.host();
    const runs = await host.call("runs.list", {});
    const child = runs.find((r) => r.originCommand === "continue");
    const parent = runs.find((r) => r.originCommand === "start");
    expect(await host.call("runs.get", { runId: parent?.runId ?? "" })).toMatchObject({
      checkpoint: { answeredBy: "model" },
    });
    const done = await world.waitForRun(child?.runId ?? "", (v) => v.status === "done", 60_000);
    expect(done.outcome).toBe("completed");
    const history = await host.call("runs.history", { runId: child?.runId ?? "" });
    expect(history?.steps.find((s) => s.path === "apply")?.output).toEqual({ shipped: false });
    // Nobody asked a person.
    expect(pi.events.some((e) => e.type === "extension_ui_request" && e.method === "select")).toBe(false);
    model.assertNoErrors();
  }, 120_000);
});
