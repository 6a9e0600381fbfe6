import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import {
  lastMessageText,
  type PiwWorld,
  piwWorlds,
  type RpcRecord,
  text,
  toolCall,
  whenLastMessageContains,
} from "@piw/test-kit";

// The built-in autoplan in a real Pi session with the scripted model: its agent steps run in the
// conversation, and a person passes (or sends back) its approval gate.
const PROBLEM = "add a --verbose flag to the CLI";
const SLOW = 180_000;

const submit = (output: unknown) => toolCall("workflow", { action: "submit", output });

const FRAME = {
  goal: "Users can see each step the CLI takes.",
  successCriteria: ["--verbose prints each step to stderr"],
  inScope: ["cli.ts"],
  outOfScope: ["log shipping"],
  weControl: ["the CLI's options"],
  outsideOurControl: ["the user's terminal"],
  evidence: [{ file: "cli.ts", fact: "options hold only help" }],
  blocker: null,
};

const proposal = (choice: string) => ({
  approaches: [
    {
      name: "A flag",
      summary: "Add verbose to options.",
      pros: ["small"],
      cons: ["one level"],
      effort: "small",
    },
    { name: "Levels", summary: "A --log-level option.", pros: ["general"], cons: ["more"], effort: "medium" },
  ],
  ideal: { endState: "Structured, levelled logs.", dependsOn: ["a logging library"] },
  choice: { approach: choice, reasons: [`${choice} fits best.`] },
});

const PLAN = {
  title: "A --verbose flag",
  summary: "Add the option and print each step when it is set.",
  steps: [
    {
      title: "Add the option",
      details: "verbose: false in options.",
      files: ["cli.ts"],
      verify: "--help lists it",
    },
  ],
  tests: ["prints steps with --verbose"],
  risks: [],
  openQuestions: [],
};

const worlds = piwWorlds();
afterEach(() => worlds.close());

/** The model's part: each step submitted in the conversation, a revised proposal choosing Levels. */
function script(w: PiwWorld): void {
  const { model } = w;
  model.reply(whenLastMessageContains("Frame this problem", submit(FRAME)));
  model.reply(whenLastMessageContains("sent your previous proposal back", submit(proposal("Levels"))));
  model.reply(whenLastMessageContains("Propose two or three", submit(proposal("A flag"))));
  model.reply(whenLastMessageContains("Write the implementation plan", submit(PLAN)));
  model.reply(whenLastMessageContains("Accepted: workflow step", text("Submitted.")));
  model.reply(whenLastMessageContains("Final output", text("PRESENTED: the plan is written.")));
  model.reply(whenLastMessageContains("is waiting at checkpoint", text("Waiting for you.")));
}

async function latestRun(w: PiwWorld) {
  const host = await w.host();
  const [run] = await host.call("runs.list", { limit: 1 });
  if (run === undefined) throw new Error("no run");
  return run;
}

function isDialog(method: "select" | "input", needle: string): (event: RpcRecord) => boolean {
  return (event) =>
    event.type === "extension_ui_request" && event.method === method && String(event.title).includes(needle);
}

/** A person's answer in the gate's dialog: the choice from its list, then the note it asks for. */
async function answerGate(pi: PiwWorld["pi"], choice: string, note: string): Promise<void> {
  const dialog = await pi.waitForEvent(isDialog("select", 'Plan with "A flag"?'), {
    since: 0,
    timeoutMs: 60_000,
  });
  expect(dialog.options).toEqual(["continue", "stop", "revise"]);
  pi.respondToUi(String(dialog.id), { value: choice });
  const asked = await pi.waitForEvent(isDialog("input", `${choice}: a note`), {
    since: 0,
    timeoutMs: 30_000,
  });
  pi.respondToUi(String(asked.id), { value: note });
}

describe("autoplan in a real Pi session", () => {
  it(
    "goes from /workflow autoplan <words> through conversation steps to a written plan file",
    async () => {
      const world = await worlds.start();
      script(world);
      const { pi, model } = world;
      await pi.prompt(`/workflow autoplan ${PROBLEM}`);
      const run = await latestRun(world);
      const done = await world.waitForRun(run.runId, (v) => v.status === "done", SLOW);
      expect(done.outcome).toBe("completed");
      const host = await world.host();
      const history = await host.call("runs.history", { runId: run.runId });
      // The first fact of the run is the problem exactly as typed.
      expect(history?.steps[0]).toMatchObject({ path: "problem", output: { problem: PROBLEM } });
      const day = new Date().toISOString().slice(0, 10);
      const relative = `docs/plans/${day}-add-a-verbose-flag-to-the-cli.md`;
      expect(history?.steps.at(-1)?.output).toMatchObject({
        status: "ready",
        file: "created",
        path: relative,
        approach: "A flag",
        chosenBy: "automatic",
      });
      const plan = readFileSync(join(world.project, relative), "utf8");
      expect(plan).toContain(`> ${PROBLEM}\n`);
      expect(plan).toContain("### 1. Add the option");
      // The steps ran in the conversation: the model saw them with the user's own tools.
      const frame = model.requests.find((r) => lastMessageText(r).includes("Frame this problem"));
      expect(frame?.tools.map((t) => t.function.name)).toContain("bash");
      await pi.waitForEvent(
        (e) => e.type === "message_end" && JSON.stringify(e).includes("PRESENTED: the plan is written."),
        { since: 0, timeoutMs: 60_000 },
      );
      model.assertNoErrors();
    },
    SLOW,
  );

  it(
    "with approval required, waits for a person: a revise note in the dialog sends the proposal back once, /workflow answer continues",
    async () => {
      const world = await worlds.start();
      script(world);
      const { pi, model } = world;
      const input = JSON.stringify({ problem: PROBLEM, approval: "required" });
      await pi.prompt(`/workflow autoplan --input-json ${input}`);
      const first = await latestRun(world);
      await world.waitForRun(first.runId, (v) => v.outcome === "waiting", SLOW);
      await answerGate(pi, "revise", "weigh log levels again");

      // The continuation proposes again with the note, and waits at the gate again.
      const host = await world.host();
      const waitingAgain = async () => {
        for (;;) {
          const runs = await host.call("runs.list", {});
          const found = runs.find((r) => r.parentRunId === first.runId);
          if (found) return found;
          await new Promise((r) => setTimeout(r, 200));
        }
      };
      const second = await waitingAgain();
      await world.waitForRun(second.runId, (v) => v.outcome === "waiting", SLOW);
      const revised = model.requests.find((r) =>
        lastMessageText(r).includes("sent your previous proposal back"),
      );
      expect(lastMessageText(revised as NonNullable<typeof revised>)).toContain("weigh log levels again");
      const again = await pi.waitForEvent(isDialog("select", 'Plan with "Levels"?'), {
        since: 0,
        timeoutMs: 60_000,
      });
      pi.respondToUi(String(again.id), { cancelled: true });
      await pi.prompt(`/workflow answer ${second.runId} {"choice":"continue"}`);

      const runs = await host.call("runs.list", {});
      const third = runs.find((r) => r.parentRunId === second.runId);
      expect(third).toBeDefined();
      const done = await world.waitForRun(third?.runId ?? "", (v) => v.status === "done", SLOW);
      expect(done.outcome).toBe("completed");
      const history = await host.call("runs.history", { runId: third?.runId ?? "" });
      const result = history?.steps.at(-1)?.output as { path: string };
      expect(result).toMatchObject({ status: "ready", approach: "Levels", chosenBy: "person" });
      const plan = readFileSync(join(world.project, result.path), "utf8");
      expect(plan).toContain("**Levels**: the model's choice, approved by a person at the approval gate.");
      expect(plan).toContain("Revised at a person's request:\n\n- weigh log levels again");
      model.assertNoErrors();
    },
    SLOW,
  );
  it(
    "ends blocked when a person stops at the gate, writing no plan",
    async () => {
      const world = await worlds.start();
      script(world);
      const { pi, model } = world;
      const input = JSON.stringify({ problem: PROBLEM, approval: "required" });
      await pi.prompt(`/workflow autoplan --input-json ${input}`);
      const first = await latestRun(world);
      await world.waitForRun(first.runId, (v) => v.outcome === "waiting", SLOW);
      await answerGate(pi, "stop", "not this quarter");
      const host = await world.host();
      let stopped: string | undefined;
      while (stopped === undefined) {
        stopped = (await host.call("runs.list", {})).find((r) => r.parentRunId === first.runId)?.runId;
        if (stopped === undefined) await new Promise((r) => setTimeout(r, 200));
      }
      const done = await world.waitForRun(stopped, (v) => v.status === "done", SLOW);
      expect(done.outcome).toBe("completed");
      const history = await host.call("runs.history", { runId: stopped });
      expect(history?.steps.at(-1)?.output).toEqual({
        status: "blocked",
        stage: "approval",
        reason: "A person stopped the plan at the approval gate. Their note: not this quarter",
      });
      expect(existsSync(join(world.project, "docs", "plans"))).toBe(false);
      model.assertNoErrors();
    },
    SLOW,
  );
});
