import { afterEach, describe, expect, it } from "vitest";
import {
  isNotice,
  lastMessage,
  lastMessageText,
  type ModelRequest,
  piwWorlds,
  text,
  toolCall,
} from "@piw/test-kit";

// An isolated step pinned to a model Pi does not know: the Pi session has its own model for
// conversation steps, but this step would fail in the worker, so the start is refused before it is
// saved, through the tool result and through `/workflow`.
const PINNED = `import { agent, defineWorkflow } from "piw";
import { z } from "zod";

export default defineWorkflow({
  name: "pinned",
  input: z.object({ task: z.string() }),
  startAt: "check",
  nodes: {
    check: agent({
      session: "isolated",
      model: "fake/no-such-model",
      prompt: "PINNED-STEP: submit { ok: boolean }.",
      output: z.object({ ok: z.boolean() }),
    }),
  },
  edges: { check: { to: "done" } },
});
`;

const worlds = piwWorlds();
afterEach(() => worlds.close());

describe("the model check of isolated steps in a real Pi session", () => {
  it("refuses a start whose isolated step pins a model Pi does not know, in the tool result and in /workflow, with no run", async () => {
    // A check that would outlast the preflight's limit is skipped: give Pi's SDK time on a busy machine.
    const world = await worlds.start({
      workflows: { pinned: PINNED },
      env: { PIW_PREFLIGHT_TIMEOUT_MS: "120000" },
    });
    const { model, pi } = world;
    const host = await world.host();
    const { sessionId } = (await pi.call({ type: "get_state" })) as { sessionId: string };

    model.reply((r) =>
      lastMessageText(r).includes("start the pinned check")
        ? toolCall("workflow", { action: "start", workflow: "pinned", task: "t" })
        : undefined,
    );
    model.reply((r) =>
      lastMessage(r)?.role === "tool" && lastMessageText(r).includes("no usable model")
        ? text("MODEL-REFUSAL-SEEN")
        : undefined,
    );
    await pi.promptAndSettle("start the pinned check");
    const refused = model.requests.find((r: ModelRequest) => lastMessage(r)?.role === "tool");
    const refusal = lastMessageText(refused as ModelRequest);
    expect(refusal).not.toContain("queued (run");
    expect(refusal).toContain("no usable model for the workflow's isolated agent steps");
    expect(refusal).toContain("check: model fake/no-such-model is not one Pi knows");
    expect(refusal).toContain("pi --list-models");

    const since = pi.mark();
    await pi.prompt("/workflow pinned t");
    await pi.waitForEvent(isNotice("model fake/no-such-model is not one Pi knows"), {
      since,
      timeoutMs: 120_000,
    });
    expect(await host.call("runs.list", { sessionId, limit: 50 })).toEqual([]);
    expect(model.requests.some((r) => lastMessageText(r).includes("PINNED-STEP"))).toBe(false);
    model.assertNoErrors();
  }, 300_000);
});
