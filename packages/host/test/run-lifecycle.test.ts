import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { isAlive, waitFor } from "@piw/test-kit";
import type { RunningHost } from "../src/index.js";
import { FLOWS, type Sandbox, sandbox, start, TestClient, writeWorkflow } from "./host-fixture.js";

let box: Sandbox;
let host: RunningHost;
let client: TestClient;
const lines: string[] = [];
beforeEach(async () => {
  box = sandbox();
  lines.length = 0;
  host = await start(box, { log: (line) => lines.push(line) });
  client = await TestClient.connect(host.socketPath);
});
afterEach(async () => {
  client.close();
  await host.stop();
  box.cleanup();
});

function applied<T extends { kind: string }>(t: T): Extract<T, { kind: "applied" }> {
  if (t.kind !== "applied") throw new Error(`expected applied, got ${JSON.stringify(t)}`);
  return t as Extract<T, { kind: "applied" }>;
}

describe("reserve and activate", () => {
  it("runs a CLI run of a compute workflow to completion and pushes its views", async () => {
    const flow = await writeWorkflow(box, "count", FLOWS.count);
    const reserved = applied(await client.call("runs.reserve", flow.reserve({ n: 20 })));
    const { runId } = reserved.value;
    expect(runId).toMatch(/^count-[0-9a-z]+-[0-9a-f]{8}$/);
    expect(reserved.value).toMatchObject({ status: "queued", origin: { kind: "cli" }, title: "Count" });
    await client.call("runs.subscribe", { runId });
    const done = await client.view(runId, (v) => v.status === "done");
    expect(done).toMatchObject({ outcome: "completed", currentWork: { kind: "none" }, error: null });
    expect(done.nodes.map((n) => [n.path, n.state, n.visits])).toEqual([
      ["one", "succeeded", 1],
      ["two", "succeeded", 1],
    ]);
    for (const node of done.nodes) expect(node.finishedAt).not.toBeNull();
    // The pushed views walked through the lifecycle, with a worker doing the work while it ran.
    const statuses = client.views.filter((v) => v.runId === runId).map((v) => v.status);
    expect(statuses.at(-1)).toBe("done");
    expect(client.views.some((v) => v.runId === runId && v.currentWork.kind === "worker")).toBe(true);
    expect(await client.call("runs.get", { runId })).toMatchObject({ status: "done", outcome: "completed" });
    expect(host.reader.readRunFinalOutput(runId)).toBe(42);
    const list = await client.call("runs.list", { statuses: ["done"] });
    expect(list.map((r) => r.runId)).toEqual([runId]);
    // Each row carries its input as one short line, computed by the host.
    expect(list[0]?.inputSummary).toBe("n: 20");
    const status = await client.call("host.status", {});
    expect(status.runs).toMatchObject({ done: 1, queued: 0, running: 0 });
  });

  it("shows every manifest node, pending until visited, and returns null for an unknown run", async () => {
    const flow = await writeWorkflow(box, "count", FLOWS.count);
    const pi = flow.reserve({ n: 1 }, { kind: "pi", sessionId: "session-a" });
    const { runId } = applied(await client.call("runs.reserve", pi)).value;
    const view = await client.call("runs.get", { runId });
    expect(view?.status).toBe("queued");
    expect(view?.nodes.map((n) => [n.path, n.state, n.visits])).toEqual([
      ["one", "pending", 0],
      ["two", "pending", 0],
    ]);
    expect(await client.call("runs.get", { runId: "nobody-1-2" })).toBeNull();
  });

  it("activates a Pi run only when its session settles", async () => {
    const flow = await writeWorkflow(box, "count", FLOWS.count);
    const { runId } = applied(
      await client.call("runs.reserve", flow.reserve({ n: 1 }, { kind: "pi", sessionId: "session-b" })),
    ).value;
    await client.call("runs.subscribe", { runId });
    await new Promise((r) => setTimeout(r, 300));
    expect((await client.call("runs.get", { runId }))?.status).toBe("queued");
    // A second start in the same session names the active run instead of queuing another.
    const busy = await client.call(
      "runs.reserve",
      flow.reserve({ n: 2 }, { kind: "pi", sessionId: "session-b" }),
    );
    expect(busy).toMatchObject({ kind: "conflict", evidence: { kind: "session_busy", activeRunId: runId } });
    await expect(client.call("session.settled", { sessionId: "session-b" })).resolves.toEqual({
      activated: [runId],
    });
    await client.view(runId, (v) => v.status === "done");
    await expect(client.call("session.settled", { sessionId: "session-b" })).resolves.toEqual({
      activated: [],
    });
  });

  it("refuses a manifest that is not a compiled graph", async () => {
    const flow = await writeWorkflow(box, "count", FLOWS.count);
    const bad = { ...flow.reserve({ n: 1 }), manifest: { nodes: "nope" } };
    const error = await client.call("runs.reserve", bad).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: "invalid_params" });
    expect(await client.call("runs.list", {})).toEqual([]);
  });
});

describe("cancel", () => {
  it("cancels a running run, tells its worker and leaves no worker behind", async () => {
    const flow = await writeWorkflow(box, "hang", FLOWS.hang);
    const release = join(box.dir, "never");
    const { runId } = applied(await client.call("runs.reserve", flow.reserve({ release }))).value;
    await client.call("runs.subscribe", {});
    const hanging = await client.view(
      runId,
      (v) =>
        v.currentWork.kind === "worker" && v.nodes.some((n) => n.path === "hang" && n.state === "running"),
    );
    expect(hanging.currentWork).toMatchObject({ kind: "worker", path: "hang" });
    const [worker] = (await client.call("host.status", {})).workers;
    expect(worker?.runId).toBe(runId);
    const cancelled = await client.call("runs.cancel", { runId });
    expect(cancelled).toMatchObject({
      kind: "applied",
      value: { status: "cancelled", outcome: "cancelled" },
    });
    await client.view(runId, (v) => v.status === "cancelled" && v.currentWork.kind === "none");
    await waitFor("the worker to exit", () => (worker?.pid ? !isAlive(worker.pid) : true), 5_000);
    // The process is gone before the host has handled its exit: ask until the host has (up to 5 s).
    for (let asked = 0; asked < 100; asked += 1) {
      if ((await client.call("host.status", {})).workers.length === 0) break;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect((await client.call("host.status", {})).workers).toEqual([]);
    // A repeated cancel adopts; the run stays cancelled.
    expect(await client.call("runs.cancel", { runId })).toMatchObject({ kind: "adopted" });
  });

  it("cancels a queued run before it ever starts", async () => {
    const flow = await writeWorkflow(box, "count", FLOWS.count);
    const { runId } = applied(
      await client.call("runs.reserve", flow.reserve({ n: 1 }, { kind: "pi", sessionId: "s-c" })),
    ).value;
    expect(await client.call("runs.cancel", { runId })).toMatchObject({
      kind: "applied",
      value: { status: "cancelled" },
    });
    await expect(client.call("session.settled", { sessionId: "s-c" })).resolves.toEqual({ activated: [] });
  });
});

describe("pause, resume, answer and restart", () => {
  it("pauses at the next node boundary and resumes on request", async () => {
    const flow = await writeWorkflow(box, "hang", FLOWS.hang);
    const release = join(box.dir, "release");
    const { runId } = applied(await client.call("runs.reserve", flow.reserve({ release }))).value;
    await client.call("runs.subscribe", { runId });
    await client.view(runId, (v) => v.nodes.some((n) => n.path === "hang" && n.state === "running"));
    expect(await client.call("runs.pause", { runId })).toMatchObject({
      kind: "applied",
      value: { paused: true },
    });
    writeFileSync(release, "go");
    const parked = await client.view(runId, (v) => v.status === "parked");
    expect(parked.recoveryReason?.code).toBe("paused");
    expect(parked.currentWork).toEqual({ kind: "none" });
    expect(await client.call("runs.resume", { runId })).toMatchObject({ kind: "applied" });
    await client.view(runId, (v) => v.status === "done");
    // Only a parked run can be resumed.
    expect(await client.call("runs.resume", { runId })).toMatchObject({
      kind: "conflict",
      evidence: { kind: "state_mismatch", expected: "parked" },
    });
  });

  it("answers a waiting checkpoint with a continuation, and restarts a finished run", async () => {
    const flow = await writeWorkflow(
      box,
      "approve",
      `import { checkpoint, compute, defineWorkflow } from "piw";
import { z } from "zod";
export default defineWorkflow({
  name: "approve",
  input: z.object({}),
  startAt: "plan",
  nodes: {
    plan: compute({ run: () => "the plan" }),
    ask: checkpoint({ prompt: "Approve?", answer: z.object({ ok: z.boolean() }) }),
    apply: compute({ run: ({ outputs }) => ({ plan: outputs.plan, answer: outputs.ask }) }),
  },
  edges: { plan: { to: "ask" }, ask: { to: "apply" }, apply: { to: "done" } },
});
`,
    );
    const { runId } = applied(await client.call("runs.reserve", flow.reserve({}))).value;
    await client.call("runs.subscribe", {});
    await client.view(runId, (v) => v.status === "done" && v.outcome === "waiting");
    const answered = applied(
      await client.call("runs.answer", { runId, answer: { ok: true }, answerer: "human" }),
    );
    const child = answered.value;
    expect(child).toMatchObject({ parentRunId: runId, originCommand: "continue", rootRunId: runId });
    await client.view(child.runId, (v) => v.status === "done" && v.outcome === "completed");
    expect(host.reader.readRunFinalOutput(child.runId)).toEqual({ plan: "the plan", answer: { ok: true } });
    // A completed run cannot be answered; it can be restarted from the first node.
    expect(
      await client.call("runs.answer", { runId: child.runId, answer: { ok: false }, answerer: "human" }),
    ).toMatchObject({
      kind: "conflict",
      evidence: { kind: "parent_not_eligible", requires: "waiting" },
    });
    const restarted = applied(await client.call("runs.restart", { runId: child.runId })).value;
    expect(restarted).toMatchObject({ originCommand: "restart", restartNumber: 1, parentRunId: child.runId });
    await client.view(restarted.runId, (v) => v.status === "done" && v.outcome === "waiting");
  });
});

describe("request keys of run-creating methods", () => {
  it("adopts a resent reserve, answer and restart, and refuses any of them without a key", async () => {
    const flow = await writeWorkflow(
      box,
      "approve",
      `import { checkpoint, compute, defineWorkflow } from "piw";
import { z } from "zod";
export default defineWorkflow({
  name: "approve",
  input: z.object({}),
  startAt: "plan",
  nodes: {
    plan: compute({ run: () => "the plan" }),
    ask: checkpoint({ prompt: "Approve?", answer: z.object({ ok: z.boolean() }) }),
  },
  edges: { plan: { to: "ask" }, ask: { to: "done" } },
});
`,
    );
    const key = (n: number) => n.toString(16).padStart(32, "0");
    const reserve = { ...flow.reserve({}), requestKey: key(1) };
    const { runId } = applied(await client.call("runs.reserve", reserve)).value;
    expect(await client.call("runs.reserve", reserve)).toMatchObject({ kind: "adopted", value: { runId } });
    await client.call("runs.subscribe", {});
    await client.view(runId, (v) => v.status === "done" && v.outcome === "waiting");

    const answer = { runId, answer: { ok: true }, answerer: "human" as const, requestKey: key(2) };
    const child = applied(await client.call("runs.answer", answer)).value.runId;
    expect(await client.call("runs.answer", answer)).toMatchObject({
      kind: "adopted",
      value: { runId: child },
    });
    const restart = { runId, requestKey: key(3) };
    const restarted = applied(await client.call("runs.restart", restart)).value.runId;
    expect(await client.call("runs.restart", restart)).toMatchObject({
      kind: "adopted",
      value: { runId: restarted },
    });
    // The key names one action: reusing it for another request is a conflict, not a second run.
    expect(await client.call("runs.restart", { runId: child, requestKey: key(1) })).toEqual({
      kind: "conflict",
      evidence: { kind: "request_mismatch", resource: "run", id: runId },
    });
    expect((await client.call("runs.list", {})).map((r) => r.runId).sort()).toEqual(
      [runId, child, restarted].sort(),
    );

    for (const [method, params] of [
      ["runs.reserve", flow.reserve({})],
      ["runs.answer", { runId, answer: { ok: true }, answerer: "human" }],
      ["runs.restart", { runId }],
    ] as const) {
      const refused = await client.peer.call(method, params as never).catch((e: unknown) => e);
      expect(refused).toMatchObject({ code: "invalid_params" });
      expect((refused as Error).message).toContain("requestKey");
    }
    expect(await client.call("runs.list", {})).toHaveLength(3);
  });
});
