import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  agent,
  compileWorkflow,
  defineWorkflow,
  executeRun,
  type IsolatedAgentReport,
  MemoryRunPort,
} from "@piw/engine";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import {
  fakeAgentHome,
  type FakeModel,
  lastMessageText,
  lastToolResultText,
  PI_TEST_ENV,
  removeTree,
  startFakeModel,
  text,
  toolCall,
} from "@piw/test-kit";
import { createPiAgentSessions } from "../src/index.js";

let model: FakeModel;
let home: string;
let env: NodeJS.ProcessEnv;
let project: string;

beforeAll(async () => {
  model = await startFakeModel();
  home = mkdtempSync(join(tmpdir(), "piw-pi-agent-"));
  // A temp HOME whose Pi agent dir points at the fake model, priced so that a step's cost shows.
  const agent = fakeAgentHome(home, { model, cost: { input: 1, output: 2, cacheRead: 0, cacheWrite: 0 } });
  project = join(home, "project");
  mkdirSync(project);
  writeFileSync(join(project, "NOTES.md"), "The secret word is PELICAN.\n");
  // Pi's SDK reads PI_TEST_ENV from this process, the rest from each session's environment.
  Object.assign(process.env, PI_TEST_ENV);
  env = { ...process.env, ...agent.env };
});

afterAll(async () => {
  await model?.close();
  removeTree(home);
});

function isolatedRun(nodes: Parameters<typeof defineWorkflow>[0]["nodes"]) {
  return compileWorkflow(
    defineWorkflow({ name: "iso", startAt: "review", nodes, edges: { review: { to: "done" } } }),
  );
}

async function run(
  workflow: ReturnType<typeof isolatedRun>,
  onProgress?: (line: string) => void,
  sessionEnv: NodeJS.ProcessEnv = env,
) {
  const port = new MemoryRunPort({ runId: `iso-${Math.random().toString(36).slice(2)}` });
  port.status = "running";
  const outcome = await executeRun({
    workflow,
    port,
    agents: {
      origin: { kind: "cli" },
      workingDir: project,
      isolated: createPiAgentSessions({
        env: sessionEnv,
        onProgress: (_step, event) => onProgress?.(`${event.kind} ${event.text}`),
      }),
    },
  });
  const records = [...port.effects.values()].map((e) => e.state);
  return { outcome, port, records };
}

function reportOf(state: { status: string; result?: { ok: boolean; value?: unknown } }): IsolatedAgentReport {
  expect(state.status).toBe("settled");
  expect(state.result?.ok).toBe(true);
  return state.result?.value as IsolatedAgentReport;
}

describe("an isolated agent step in a real Pi SDK session", () => {
  it("reads a file with Pi's read tool, has an invalid submit corrected, and saves its cost and transcript", async () => {
    const marker = "ISO-READ-STEP";
    model.replyOnce((r) =>
      lastMessageText(r).includes(marker) ? toolCall("read", { path: "NOTES.md" }) : undefined,
    );
    model.replyOnce((r) =>
      lastToolResultText(r)?.includes("PELICAN")
        ? toolCall("workflow", { action: "submit", output: { word: 7 } })
        : undefined,
    );
    model.replyOnce((r) =>
      lastToolResultText(r)?.includes("Output rejected")
        ? toolCall("workflow", { action: "submit", output: { word: "PELICAN" } })
        : undefined,
    );
    const progress: string[] = [];
    const { outcome, records, port } = await run(
      isolatedRun({
        review: agent({
          prompt: `${marker}: read NOTES.md and submit the secret word.`,
          output: z.object({ word: z.string() }),
        }),
      }),
      (line) => progress.push(line),
    );
    expect(outcome).toEqual({ kind: "completed", output: { word: "PELICAN" } });
    // No conversation was involved: nothing went to the outbox.
    expect(port.messages).toEqual([]);
    // Each tool call with where it looks, never the submit tool; then the accepted output.
    expect(progress).toEqual(["tool read NOTES.md", 'submitted {"word":"PELICAN"}']);
    // The session had only the read-only tools and its submit tool.
    const first = model.requests.find((r) => lastMessageText(r).includes(marker));
    expect(first?.tools.map((t) => t.function.name).sort()).toEqual([
      "find",
      "grep",
      "ls",
      "read",
      "workflow",
    ]);
    // The rejection named the field, in the same session, without the value.
    const rejection = model.requests.find((r) => lastToolResultText(r)?.includes("Output rejected"));
    expect(lastToolResultText(rejection as NonNullable<typeof rejection>)).toContain("word:");
    // Accepting ends the turn: no request after the accepted submit.
    expect(model.requests.filter((r) => lastToolResultText(r)?.includes("Accepted: workflow step"))).toEqual(
      [],
    );

    expect(records).toHaveLength(1);
    const report = reportOf(records[0] as never);
    expect(report.model).toBe("fake/fake-model");
    // Three model replies of 10 tokens in and 5 out each (the fake's usage), priced by models.json.
    expect(report.tokensIn).toBe(30);
    expect(report.tokensOut).toBe(15);
    expect(report.cost).toBeGreaterThan(0);
    expect(report.durationMs).toBeGreaterThan(0);
    expect(report.transcript.map((e) => e.role)).toEqual([
      "user",
      "tool_call",
      "tool_result",
      "tool_call",
      "tool_result",
      "tool_call",
      "tool_result",
    ]);
    expect(report.transcript[2]).toMatchObject({ role: "tool_result", tool: "read", isError: false });
    expect(report.transcriptOmitted).toBe(0);
    model.assertNoErrors();
  }, 60_000);

  it("takes the model's update as the step's progress and refuses a bad one in the same session", async () => {
    const marker = "ISO-UPDATE-STEP";
    model.replyOnce((r) =>
      lastMessageText(r).includes(marker)
        ? toolCall("workflow", { action: "update", done: 2, total: 5, message: "read two files" })
        : undefined,
    );
    model.replyOnce((r) =>
      lastToolResultText(r)?.includes("Progress of review updated")
        ? toolCall("workflow", { action: "update", done: 9 })
        : undefined,
    );
    model.replyOnce((r) =>
      lastToolResultText(r)?.includes("Update refused")
        ? toolCall("workflow", { action: "submit", output: "done" })
        : undefined,
    );
    const { outcome, port } = await run(
      isolatedRun({ review: agent({ prompt: `${marker}: work, report, submit.`, output: z.string() }) }),
    );
    expect(outcome).toEqual({ kind: "completed", output: "done" });
    // The accepted update, as ctx.progress would have reported it for this visit's attempt.
    expect(port.progressReports).toEqual([
      { path: "review", visit: 1, attempt: 1, state: { done: 2, total: 5, message: "read two files" } },
    ]);
    // The refused one told the model which rule it broke (done above the saved total of 5).
    const refusal = model.requests.find((r) => lastToolResultText(r)?.includes("Update refused"));
    expect(lastToolResultText(refusal as NonNullable<typeof refusal>)).toBe(
      "Update refused: done must not be greater than total.",
    );
    model.assertNoErrors();
  }, 60_000);

  it("marks this process for the commands its bash tool runs, as under Pi, so piw answer refuses them", async () => {
    const marker = "ISO-BASH-STEP";
    model.replyOnce((r) =>
      lastMessageText(r).includes(marker)
        ? toolCall("bash", { command: 'echo "mark=$PIW_UNDER_PI"' })
        : undefined,
    );
    model.replyOnce((r) =>
      lastToolResultText(r)?.includes("mark=")
        ? toolCall("workflow", { action: "submit", output: "ran" })
        : undefined,
    );
    const { outcome } = await run(
      isolatedRun({
        review: agent({
          session: "isolated",
          prompt: `${marker}: run a command.`,
          output: z.string(),
          tools: ["bash"],
        }),
      }),
    );
    expect(outcome).toEqual({ kind: "completed", output: "ran" });
    const ran = model.requests.find((r) => lastToolResultText(r)?.includes("mark="));
    expect(lastToolResultText(ran as NonNullable<typeof ran>)?.trim()).toBe("mark=1");
    model.assertNoErrors();
  }, 60_000);

  it("reminds a model that ends its turn without submitting, within the same session", async () => {
    const marker = "ISO-NUDGE-STEP";
    model.replyOnce((r) => (lastMessageText(r).includes(marker) ? text("I think it is fine.") : undefined));
    model.replyOnce((r) =>
      lastMessageText(r).includes("is still open")
        ? toolCall("workflow", { action: "submit", output: "ok" })
        : undefined,
    );
    const { outcome } = await run(
      isolatedRun({ review: agent({ prompt: `${marker}: say ok.`, output: z.string() }) }),
    );
    expect(outcome).toEqual({ kind: "completed", output: "ok" });
    const reminder = model.requests.find((r) => lastMessageText(r).includes("is still open"));
    // The reminder went to the same session: the first prompt is still in its context.
    expect(reminder?.messages.some((m) => JSON.stringify(m.content).includes(marker))).toBe(true);
    model.assertNoErrors();
  }, 60_000);

  it("times the step out and aborts a model that never submits", async () => {
    const marker = "ISO-SLOW-STEP";
    // A reply that would stream for a minute: the deadline has to stop it.
    model.replyOnce((r) =>
      lastMessageText(r).includes(marker) ? text("x".repeat(600), { chunkSize: 1, delayMs: 100 }) : undefined,
    );
    const { outcome, port } = await run(
      isolatedRun({
        review: agent({ prompt: `${marker}: take your time.`, output: z.string(), timeoutMs: 1_500 }),
      }),
    );
    expect(outcome).toMatchObject({
      kind: "timed_out",
      error: { code: "node_timed_out", message: "Step review timed out after 1500 ms." },
    });
    expect(port.visits[0]?.status).toBe("timed_out");
    const slow = await model.waitForRequest((r) => lastMessageText(r).includes(marker));
    // The session hung up on the model: the fake saw its client close mid-stream.
    await expect.poll(() => slow.outcome, { timeout: 10_000 }).toBe("client_closed");
    // The aborted session was closed before the visit ended: its record keeps what it cost so far.
    const [record] = [...port.effects.values()].map((e) => e.state);
    expect(record?.status).toBe("settled");
    expect(reportOf(record as NonNullable<typeof record>)).toMatchObject({
      model: "fake/fake-model",
      ended: "timed_out",
    });
  }, 60_000);

  it("fails the step with model_unavailable when the pinned model is not one Pi knows", async () => {
    const { outcome, port } = await run(
      isolatedRun({ review: agent({ prompt: "p", output: z.string(), model: "fake/no-such-model" }) }),
    );
    expect(outcome).toMatchObject({
      kind: "failed",
      error: {
        code: "model_unavailable",
        message: expect.stringContaining(
          "Agent step review has no usable model: model fake/no-such-model is not one Pi knows; configure one:",
        ),
      },
    });
    const state = [...port.effects.values()][0]?.state;
    expect(state).toMatchObject({ status: "settled", result: { ok: false } });
  }, 60_000);

  it("fails the step with model_unavailable, without asking any model, when Pi has no model configured", async () => {
    const bare = join(home, "bare");
    mkdirSync(join(bare, "agent"), { recursive: true });
    const before = model.requests.length;
    const { outcome } = await run(
      isolatedRun({ review: agent({ prompt: "p", output: z.string() }) }),
      undefined,
      { ...env, HOME: bare, PI_CODING_AGENT_DIR: join(bare, "agent") },
    );
    expect(outcome).toMatchObject({
      kind: "failed",
      error: {
        code: "model_unavailable",
        message: expect.stringContaining("Agent step review has no usable model: Pi has no model configured"),
      },
    });
    expect(model.requests.length).toBe(before);
  }, 60_000);
});
