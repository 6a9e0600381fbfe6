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

const NOTE = `import { compute, defineWorkflow } from "piw";

export default defineWorkflow({
  name: "note",
  startAt: "write",
  nodes: { write: compute({ run: () => ({ written: true }) }) },
  edges: { write: { to: "done" } },
});
`;

const worlds = piwWorlds();
afterEach(() => worlds.close());

describe("a queued run, before it starts", () => {
  it("answers status and cancel by its ID in the same turn; the cancelled launch sends no follow-up and frees the session", async () => {
    const world = await worlds.start({ workflows: { note: NOTE } });
    const { model, pi } = world;
    let runId = "";
    model.reply(
      whenLastMessageContains("note please", toolCall("workflow", { action: "start", workflow: "note" })),
    );
    model.reply((request) => {
      const last = lastMessageText(request);
      // Only the first start: the second one is answered by its own rule below.
      if (!last.includes("queued (run") || runId !== "") return undefined;
      runId = queuedRunId(last);
      return toolCall("workflow", { action: "status", runId });
    });
    model.reply((request) =>
      lastMessageText(request).includes("is queued")
        ? toolCall("workflow", { action: "cancel", runId })
        : undefined,
    );
    model.reply(whenLastMessageContains("cancelled.", text("Cancelled before it started.")));
    model.reply(
      whenLastMessageContains("again please", toolCall("workflow", { action: "start", workflow: "note" })),
    );

    await pi.promptAndSettle("note please");
    const statusResult = model.requests.find((r) => lastMessageText(r).includes("is queued"));
    expect(lastMessageText(statusResult as NonNullable<typeof statusResult>)).toContain(
      `run ${runId} is queued`,
    );
    const host = await world.host();
    const view = await host.call("runs.get", { runId });
    expect(view?.status).toBe("cancelled");
    expect(view?.startedAt).toBeNull();
    expect(view?.nodes.every((node) => node.visits === 0)).toBe(true);

    // A launch cancelled before it ran sends nothing (the one-follow-up rule): no follow-up turn, no note.
    expect(model.requests.some((r) => lastMessageText(r).includes("failed to start"))).toBe(false);

    // The reservation was released: the session can start the workflow again, and it runs.
    const secondStart = model.requests.length;
    model.reply((request) => {
      const last = lastMessageText(request);
      return last.includes("queued (run") && request.index > secondStart ? text("Started again.") : undefined;
    });
    await pi.promptAndSettle("again please");
    const again = model.requests.findLast((r) => lastMessageText(r).includes("queued (run"));
    const secondRun = queuedRunId(lastMessageText(again as NonNullable<typeof again>));
    expect(secondRun).not.toBe(runId);
    const done = await world.waitForRun(secondRun, (v) => v.status === "done", 30_000);
    expect(done.outcome).toBe("completed");
    // Once the second run's own terminal note arrived, the session holds nothing about the first.
    let messages = await piwMessages(pi);
    for (let i = 0; i < 100 && messages.length === 0; i += 1) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      messages = await piwMessages(pi);
    }
    expect(messages.map((m) => [m.details.runId, m.details.kind])).toEqual([[secondRun, "terminal"]]);

    // A restart from outside Pi (the CLI's runs.restart) belongs to this idle session: it starts now.
    const restarted = await host.call("runs.restart", { runId: secondRun });
    if (restarted.kind !== "applied") throw new Error(JSON.stringify(restarted));
    const third = await world.waitForRun(restarted.value.runId, (v) => v.status === "done", 30_000);
    expect(third.originCommand).toBe("restart");
    model.assertNoErrors();
  }, 120_000);
});
