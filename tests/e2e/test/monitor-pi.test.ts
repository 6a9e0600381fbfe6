import { existsSync, writeFileSync } from "node:fs";
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
} from "@piw/test-kit";

// The built-in monitor started by the model in the real Pi: each check is reported in the session as a
// passive message, and none of them starts a model turn; only the run's end does.
let world: PiwWorld | undefined;
afterEach(async () => {
  await world?.close();
  world = undefined;
});

describe("monitor in Pi", () => {
  it("reports every check in the session without starting a turn, and presents the goal met", async () => {
    world = await startPiwWorld({ env: { PIW_PREFLIGHT_TIMEOUT_MS: "60000" } });
    const { model, pi, project } = world;
    const flag = join(project, "release.flag");
    const input = { task: "the release flag exists", check: "test -e release.flag", everyMinutes: 0.02 };
    model.reply(
      whenLastMessageContains(
        "tell me when the release flag appears",
        toolCall("workflow", { action: "start", workflow: "monitor", input }),
      ),
    );
    model.reply(whenLastMessageContains("queued (run", text("Watching for the flag.")));
    model.reply(whenLastMessageContains("Final output", text("PRESENTED: the release flag is there.")));

    await pi.promptAndSettle("tell me when the release flag appears");
    const started = model.requests.find((r) => lastMessageText(r).includes("queued (run"));
    if (started === undefined) throw new Error("the model never started the monitor");
    const runId = queuedRunId(lastMessageText(started));
    const settled = model.requests.length;

    // Two checks reported in the session before the flag appears: the run waited between them.
    const reports = async () =>
      (await piwMessages(pi)).filter((m) => m.details.kind === "notify" && m.details.runId === runId);
    await waitFor("two check reports in the session", async () => (await reports()).length >= 2, 120_000);
    expect(existsSync(flag)).toBe(false);
    writeFileSync(flag, "1.2.3");

    const done = await world.waitForRun(runId, (view) => view.status === "done", 120_000);
    expect(done.outcome).toBe("completed");
    expect(done.output).toMatchObject({ kind: "json", value: { met: true, ending: "met" } });
    await pi.waitForEvent(
      (e) => e.type === "message_end" && JSON.stringify(e).includes("PRESENTED: the release flag is there."),
      { timeoutMs: 60_000 },
    );

    // The last check's report is passive and the run ends right after it: the run's end keeps it in
    // the outbox, so it reaches the session, once, before the presentation.
    const met = /^Monitor check \d+ of 100: met\. The goal is met; the monitor ends\.$/;
    await waitFor(
      "the report of the check that met the goal",
      async () => (await reports()).some((m) => met.test(m.text)),
      60_000,
    );
    const texts = (await reports()).map((m) => m.text);
    expect(texts[0]).toMatch(/^Monitor check 1 of 100: not met yet\. Next check at \d\d:\d\d:\d\d UTC/);
    expect(texts.at(-1)).toMatch(met);
    expect(texts.filter((line) => met.test(line))).toHaveLength(1);
    for (const line of texts.slice(0, -1)) expect(line).toMatch(/^Monitor check \d+ of 100: not met yet\. /);
    // No check report started a turn: every model request after the starting turn is the presentation.
    const later = model.requests.slice(settled);
    expect(later.length).toBeGreaterThanOrEqual(1);
    for (const request of later) expect(lastMessageText(request)).toContain("Final output");
    model.assertNoErrors();
  }, 300_000);
});
