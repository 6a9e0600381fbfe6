import { appendFileSync } from "node:fs";
import type { RunView } from "@piw/protocol";
import { afterEach, describe, expect, it } from "vitest";
import {
  lastMessage,
  lastMessageText,
  type ModelRequest,
  piwMessages,
  piwWorlds,
  queuedRunId,
  text,
  toolCall,
} from "@piw/test-kit";

/** A file workflow whose first node is an agent step: "reached its first step" is observable. */
const GREET = `import { agent, defineWorkflow, type NodeContext } from "piw";
import { z } from "zod";

export default defineWorkflow({
  name: "greet",
  input: z.object({ task: z.string() }),
  startAt: "write",
  nodes: {
    write: agent({
      prompt: ({ input }: NodeContext<{ task: string }>) => \`GREET-STEP for \${input.task}: submit { text: string }.\`,
      output: z.object({ text: z.string() }),
    }),
  },
  edges: { write: { to: "done" } },
});
`;

const worlds = piwWorlds();
afterEach(() => worlds.close());

const lastIs = (needle: string) => (r: ModelRequest) => lastMessageText(r).includes(needle);

describe("the one-follow-up rule: a deferred launch failure in a real Pi session", () => {
  it("refuses bad input in the same turn with no run, fails a changed source at activation, tells the model once, and lets it start again", async () => {
    const world = await worlds.start({ workflows: { greet: GREET } });
    const { model, pi } = world;
    const workflowFile = `${world.project}/.pi/workflows/greet.workflow.ts`;
    const host = await world.host();
    const { sessionId } = (await pi.call({ type: "get_state" })) as { sessionId: string };

    // --- Preflight: input that does not match the schema is a tool error in the same turn.
    model.reply(
      whenLast(
        "start greet with a number",
        toolCall("workflow", { action: "start", workflow: "greet", input: { task: 42 } }),
      ),
    );
    model.reply((r) =>
      lastMessage(r)?.role === "tool" &&
      lastMessageText(r).includes("the input does not match workflow greet")
        ? text("PREFLIGHT-SEEN: the input was wrong.")
        : undefined,
    );
    const runsBefore = await host.call("runs.list", { sessionId, limit: 50 });
    await pi.promptAndSettle("start greet with a number");
    const refused = model.requests.find((r) => lastMessage(r)?.role === "tool");
    expect(refused, "the preflight error reached the model as the tool result").toBeDefined();
    const refusal = lastMessageText(refused as ModelRequest);
    expect(refusal).not.toContain("queued (run");
    expect(refusal).toContain("the input does not match workflow greet's input");
    expect(refusal).toMatch(/task/);
    // No queued record, no run: the session's runs are exactly what they were.
    expect(await host.call("runs.list", { sessionId, limit: 50 })).toEqual(runsBefore);
    expect(runsBefore).toEqual([]);
    model.assertNoErrors();

    // --- A valid start; the source changes before the initiating turn settles.
    let edits = 0;
    let firstRunId: string | undefined;
    let secondRunId: string | undefined;
    model.reply(
      whenLast(
        "please greet the team",
        toolCall("workflow", { action: "start", workflow: "greet", task: "team" }),
      ),
    );
    model.reply((r) => {
      if (!lastMessageText(r).includes("queued (run")) return undefined;
      const runId = queuedRunId(lastMessageText(r));
      if (firstRunId === undefined) {
        firstRunId = runId;
        // Still inside the initiating turn: the model's final text has not been returned yet.
        edits += 1;
        appendFileSync(workflowFile, "\n// edited while the initiating turn was still active\n");
        return text("QUEUED-ONCE: it starts when I am done.");
      }
      secondRunId = runId;
      return text("QUEUED-AGAIN: the corrected run starts when I am done.");
    });
    // The follow-up: the model inspects the failed run by ID, then starts again.
    model.reply((r) => {
      const last = lastMessageText(r);
      if (!last.includes("failed to start (run")) return undefined;
      const runId = /failed to start \(run ([^)\s]+)\)/.exec(last)?.[1] ?? "missing";
      return toolCall("workflow", { action: "status", runId });
    });
    model.reply((r) =>
      lastMessage(r)?.role === "tool" && /Workflow greet run \S+ is failed/.test(lastMessageText(r))
        ? toolCall("workflow", { action: "start", workflow: "greet", task: "team" })
        : undefined,
    );
    model.reply(
      whenLast(
        "GREET-STEP for team",
        toolCall("workflow", { action: "submit", output: { text: "hello team" } }),
      ),
    );
    model.reply(whenLast("Accepted: workflow step write", text("STEP-SEEN: submitted.")));

    await pi.promptAndSettle("please greet the team");
    expect(edits).toBe(1);
    expect(firstRunId).toBeDefined();
    const failedRunId = firstRunId as string;

    // Activation at agent_settled recorded the failure; no node ran.
    const failed = await world.waitForRun(failedRunId, (view) => view.status === "failed", 60_000);
    expect(failed.outcome).toBe("failed");
    expect(failed.error?.code).toBe("source_changed");
    expect(failed.nodes.map((node) => [node.path, node.state, node.visits])).toEqual([
      ["write", "pending", 0],
    ]);

    // Exactly one follow-up turn carries the safe error, as a user message.
    const followUp = await model.waitForRequest(lastIs(`failed to start (run ${failedRunId})`), 60_000);
    expect(lastMessage(followUp)?.role).toBe("user");
    expect(lastMessageText(followUp)).toMatch(
      new RegExp(`^Workflow greet failed to start \\(run ${escapeRegExp(failedRunId)}\\): .+`),
    );
    expect(lastMessageText(followUp)).not.toMatch(/\n\s+at /); // no stack trace

    // The corrected run reaches its first step.
    const secondQueued = await model.waitForRequest(
      (r) => lastMessageText(r).includes("queued (run") && queuedRunId(lastMessageText(r)) !== failedRunId,
      60_000,
    );
    const correctedRunId = queuedRunId(lastMessageText(secondQueued));
    const running = await world.waitForRun(
      correctedRunId,
      (view) => view.nodes[0]?.state === "running",
      60_000,
    );
    expect(running.status).toBe("running");
    await model.waitForRequest(lastIs("GREET-STEP for team"), 60_000);
    await pi.waitForEvent((e) => e.type === "message_end" && JSON.stringify(e).includes("STEP-SEEN"), {
      timeoutMs: 30_000,
    });
    expect(secondRunId).toBe(correctedRunId);
    const finished = await world.waitForRun(correctedRunId, (view) => view.status === "done", 60_000);
    expect(finished.outcome).toBe("completed");

    // The first run stays inspectable by ID: through the tool (in the follow-up turn) and the host.
    const statusResult = model.requests.find(
      (r) => lastMessage(r)?.role === "tool" && lastMessageText(r).includes(`run ${failedRunId} is failed`),
    );
    expect(statusResult, "workflow status with the failed run's ID").toBeDefined();
    expect(lastMessageText(statusResult as ModelRequest)).toContain("[source_changed]");
    const stored = (await host.call("runs.get", { runId: failedRunId })) as RunView;
    expect(stored.status).toBe("failed");
    expect(stored.error?.code).toBe("source_changed");
    expect(stored.nodes.every((node) => node.state === "pending")).toBe(true);

    // One launch_failure message in the Pi session, and no duplicate follow-up.
    const messages = await piwMessages(pi);
    const failures = messages.filter((m) => m.details.kind === "launch_failure");
    expect(failures).toHaveLength(1);
    expect(failures[0]?.details.runId).toBe(failedRunId);
    const ids = messages.map((m) => m.details.piwMessageId);
    expect(new Set(ids).size).toBe(ids.length);
    expect(model.requests.filter(lastIs("failed to start (run"))).toHaveLength(1);

    // Both runs belong to this session; no other run was created.
    const runs = await host.call("runs.list", { sessionId, limit: 50 });
    expect(runs.map((run) => run.runId).sort()).toEqual([failedRunId, correctedRunId].sort());
    model.assertNoErrors();
  }, 120_000);
});

function whenLast(needle: string, reply: ReturnType<typeof text>) {
  return (r: ModelRequest) => (lastMessageText(r).includes(needle) ? reply : undefined);
}

function escapeRegExp(value: string): string {
  return value.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}
