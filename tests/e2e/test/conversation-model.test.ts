import { afterEach, describe, expect, it } from "vitest";
import { isNotice, lastMessageText, piwWorlds } from "@piw/test-kit";

// A conversation step whose Pi session's model the provider refuses for good: the step fails with
// model_unavailable at once, instead of being prompted again until three lost turns park the run.
const ASK = `import { agent, defineWorkflow } from "piw";
import { z } from "zod";

export default defineWorkflow({
  name: "ask",
  input: z.object({ task: z.string() }),
  startAt: "draft",
  nodes: {
    draft: agent({
      prompt: "ASK-STEP: submit { text: string }.",
      output: z.object({ text: z.string() }),
    }),
  },
  edges: { draft: { to: "done" } },
});
`;

const worlds = piwWorlds();
afterEach(() => worlds.close());

describe("a conversation step whose model the provider refuses", () => {
  it("fails with model_unavailable after one 401, without the provider's text, and is not prompted again", async () => {
    const world = await worlds.start({ workflows: { ask: ASK } });
    const { model, pi } = world;
    model.reply((r) =>
      lastMessageText(r).includes("ASK-STEP")
        ? { type: "http_error", status: 401, message: "Incorrect API key provided: sk-secret-5678" }
        : undefined,
    );
    const since = pi.mark();
    await pi.prompt("/workflow ask t");
    const queued = await pi.waitForEvent(isNotice("queued (run"), { since, timeoutMs: 60_000 });
    const runId = /\(run ([^)]+)\)/.exec(String(queued.message))?.[1] as string;
    const failed = await world.waitForRun(runId, (view) => view.status === "failed", 90_000);
    expect(failed).toMatchObject({ outcome: "failed", error: { code: "model_unavailable" } });
    expect(failed.error?.message).toContain(
      "Agent step draft: the provider refused the Pi session's model for good",
    );
    expect(JSON.stringify(failed)).not.toContain("sk-secret");
    expect(model.requests.filter((r) => lastMessageText(r).includes("ASK-STEP"))).toHaveLength(1);
  }, 180_000);
});
