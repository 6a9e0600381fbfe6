import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import {
  lastMessageText,
  piwMessages,
  type PiwWorld,
  queuedRunId,
  startPiwWorld,
  text,
  toolCall,
  waitFor,
  whenLastMessageContains,
  whenToolResultContains,
} from "@piw/test-kit";

// A notify node is the run's last word before its end. Pi is busy with another turn when the run
// saves it and ends, so the extension can deliver it only after the run is over: the run's end must
// not withdraw it (monitor's report of the check that met the goal is such a message).
const tellWorkflow = (gate: string) => `import { defineWorkflow, notify, shell } from "piw";

export default defineWorkflow({
  name: "tell",
  startAt: "hold",
  nodes: {
    hold: shell({ exec: ["sh", "-c", ${JSON.stringify(`until test -e '${gate}'; do sleep 0.05; done`)}] }),
    report: notify({ message: "TELL-REPORT: the last word before the end." }),
  },
  edges: { hold: { to: "report" }, report: { to: "done" } },
});
`;

let world: PiwWorld | undefined;
afterEach(async () => {
  await world?.close();
  world = undefined;
});

describe("a notification right before the run's end", () => {
  it("reaches the Pi session once, before the run's end message, though the run ended while Pi was busy", async () => {
    world = await startPiwWorld();
    const { model, pi, project } = world;
    const gate = join(project, "gate.flag");
    const release = join(project, "turn.flag");
    world.writeWorkflow("tell", tellWorkflow(gate));
    model.reply(
      whenLastMessageContains("start tell", toolCall("workflow", { action: "start", workflow: "tell" })),
    );
    model.reply(whenToolResultContains("queued (run", text("Started tell.")));
    model.reply(
      whenLastMessageContains(
        "keep busy",
        toolCall("bash", { command: `until test -e '${release}'; do sleep 0.05; done; echo released` }),
      ),
    );
    model.reply(whenToolResultContains("released", text("Done being busy.")));

    await pi.promptAndSettle("start tell");
    const started = model.requests.find((r) => lastMessageText(r).includes("queued (run"));
    if (started === undefined) throw new Error("the model never started the workflow");
    const runId = queuedRunId(lastMessageText(started));
    await world.waitForRun(runId, (view) =>
      view.nodes.some((n) => n.path === "hold" && n.state === "running"),
    );

    // Pi runs a turn that lasts until the test lets it go; meanwhile the run notifies and ends.
    await pi.prompt("keep busy");
    await model.waitForRequest((r) => lastMessageText(r).includes("keep busy"), 30_000);
    writeFileSync(gate, "");
    const done = await world.waitForRun(runId, (view) => view.status === "done", 60_000);
    expect(done.outcome).toBe("completed");
    const ofRun = async () => (await piwMessages(pi)).filter((m) => m.details.runId === runId);
    // Nothing reached the busy session: the notification waits in the outbox past the run's end.
    expect((await ofRun()).map((m) => m.details.kind)).toEqual([]);

    writeFileSync(release, "");
    await waitFor(
      "the run's end message in the session",
      async () => (await ofRun()).some((m) => m.details.kind === "terminal"),
      60_000,
    );
    await pi.waitForIdle({ timeoutMs: 30_000 });
    // The outbox hands out oldest first, so the notification came before the end, and only once.
    expect((await ofRun()).map((m) => [m.details.kind, m.text])).toEqual([
      ["notify", "TELL-REPORT: the last word before the end."],
      ["terminal", `Workflow tell completed (run ${runId}).`],
    ]);
    model.assertNoErrors();
  }, 180_000);
});
