import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import {
  type FakeModel,
  lastMessageText,
  PI_PACKAGE,
  PiTerminal,
  piwEnv,
  removeTree,
  startFakeModel,
  stopHost,
  text,
  toolCall,
  whenLastMessageContains,
  whenToolResultContains,
} from "@piw/test-kit";

const cardWorkflow = `import { agent, defineWorkflow } from "piw";
import { z } from "zod";

export default defineWorkflow({
  name: "card",
  startAt: "work",
  nodes: {
    work: agent({
      prompt: "CARD-STEP: write the summary.\\n\\nSECOND-PARAGRAPH of the task, shown only when expanded.",
      output: z.object({ done: z.boolean() }),
    }),
  },
  edges: { work: { to: "done" } },
});
`;

let cleanup: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const step of cleanup.reverse()) await step();
  cleanup = [];
});

describe("piw messages in Pi's terminal UI", () => {
  it("draws a step prompt and the run's end as one-line cards, expands them, and the model gets the full text", async () => {
    const root = mkdtempSync(join(tmpdir(), "piw-e2e-cards-"));
    const stateDir = join(root, "state");
    const project = join(root, "project");
    mkdirSync(join(project, ".pi", "workflows"), { recursive: true });
    writeFileSync(join(project, ".pi", "workflows", "card.workflow.ts"), cardWorkflow);
    const model: FakeModel = await startFakeModel();
    cleanup.push(async () => {
      await model.close();
      removeTree(root);
    });
    model.reply(
      whenLastMessageContains("please card", toolCall("workflow", { action: "start", workflow: "card" })),
    );
    model.reply(whenToolResultContains("queued (run", text("Queued the card run.")));
    model.reply(
      whenLastMessageContains(
        "CARD-STEP",
        toolCall("workflow", { action: "submit", output: { done: true } }),
      ),
    );
    model.reply(whenToolResultContains("Accepted", text("Submitted the card step.")));
    model.reply(text("Noted."));

    const terminal = PiTerminal.start({
      model,
      cwd: project,
      extensions: [PI_PACKAGE],
      env: piwEnv(stateDir),
    });
    cleanup.push(async () => {
      terminal.close();
      await stopHost(stateDir);
    });
    await terminal.waitForScreen("Pi's editor", (screen) => screen.includes("fake"), 60_000);
    terminal.type("please card");
    terminal.press("Enter");

    const done = await terminal.waitForScreen(
      "the run's end card",
      (screen) => /piw run · card · run \S+ · completed/.test(screen),
      90_000,
    );
    const stepCard = cardLine(done, "piw step");
    const runId = /run (card-\S+)/.exec(stepCard)?.[1] ?? "";
    expect(runId).not.toBe("");
    // One line: kind, workflow, run, step and visit, state, the prompt's first line, the expand hint.
    expect(stepCard).toMatch(
      new RegExp(
        `◆ piw step · card · run ${runId} · work #1 · running · CARD-STEP: write the summary\\. .*to expand`,
      ),
    );
    expect(cardLine(done, "piw run")).toContain(`Workflow card completed (run ${runId}).`);
    // Collapsed, the rest of the prompt and its contract stay out of the chat.
    expect(done).not.toContain("SECOND-PARAGRAPH");
    expect(done).not.toContain("Workflow step contract");

    // The model received the whole prompt, contract included.
    const stepRequest = model.requests.find((r) => lastMessageText(r).includes("CARD-STEP"));
    const prompt = lastMessageText(stepRequest as NonNullable<typeof stepRequest>);
    expect(prompt).toContain("SECOND-PARAGRAPH of the task");
    expect(prompt).toContain("Workflow step contract");

    // Expanding tool output (ctrl+o) shows the full text under the card.
    terminal.press("C-o");
    const expanded = await terminal.waitForScreen("the expanded card", (screen) =>
      screen.includes("SECOND-PARAGRAPH of the task, shown only when expanded."),
    );
    expect(expanded).toContain("Workflow step contract");
    expect(cardLine(expanded, "piw step")).not.toContain("to expand");
    model.assertNoErrors();
  }, 180_000);
});

/** The screen line that holds a card of this kind; fails when there is none. */
function cardLine(screen: string, kind: string): string {
  const line = screen.split("\n").find((l) => l.includes(`◆ ${kind} ·`));
  if (line === undefined) throw new Error(`no "${kind}" card on the screen:\n${screen}`);
  return line;
}
