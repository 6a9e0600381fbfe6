import { RpcError, type RunView } from "@piw/protocol";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { RunningHost } from "../src/index.js";
import { readState } from "./faults/fault-fixture.js";
import { type Sandbox, sandbox, start, TestClient, writeWorkflow } from "./host-fixture.js";

// An approval gate under a real host and real workers: who may answer it, and its deadline, whose
// default the host's wake clock takes and records as automatic, never as a person's answer.

let box: Sandbox;
let host: RunningHost;
let client: TestClient;
beforeEach(async () => {
  box = sandbox();
  host = await start(box);
  client = await TestClient.connect(host.socketPath);
  await client.call("runs.subscribe", {});
});
afterEach(async () => {
  client.close();
  await host.stop();
  box.cleanup();
});

async function waitingGate(deadline: string): Promise<RunView> {
  const flow = await writeWorkflow(
    box,
    "gate",
    `import { approval, compute, defineWorkflow } from "piw";
import { z } from "zod";
export default defineWorkflow({
  name: "gate",
  input: z.object({}),
  startAt: "gate",
  nodes: {
    gate: approval({ prompt: "Ship the plan?"${deadline} }),
    apply: compute({ run: ({ outputs }) => ({ decided: outputs.gate }) }),
  },
  edges: { gate: { to: "apply" }, apply: { to: "done" } },
});
`,
  );
  const reserved = await client.call("runs.reserve", flow.reserve({}));
  if (reserved.kind !== "applied") throw new Error(`not reserved: ${JSON.stringify(reserved)}`);
  return client.view(reserved.value.runId, (v) => v.status === "done" && v.outcome === "waiting");
}

async function refusal(
  runId: string,
  answer: unknown,
  answerer: "human" | "model" = "human",
): Promise<string> {
  const error = await client.call("runs.answer", { runId, answer: answer as never, answerer }).then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(error instanceof RpcError)) throw new Error(`expected a refusal, got ${String(error)}`);
  return error.code;
}

/** Who answered each continuation of `runId`, as its `run.queued` event recorded it. */
function answeredBy(childRunId: string): unknown {
  return readState(box, (store) =>
    store.listRunEvents(childRunId, 0, 100).find((e) => e.type === "run.queued"),
  )?.data;
}

describe("an approval gate under a real host", () => {
  it("refuses a wrong choice, a revision without a note, a person posing as the clock, and the model", async () => {
    const view = await waitingGate("");
    const { runId } = view;
    expect(view.checkpoint).toMatchObject({ answeredBy: "human" });
    expect(view.checkpoint?.deadline).toBeUndefined();
    expect(await refusal(runId, { choice: "maybe" })).toBe("answer_invalid");
    expect(await refusal(runId, { choice: "revise" })).toBe("answer_invalid");
    expect(await refusal(runId, { choice: "continue", automatic: "deadline" })).toBe("answer_invalid");
    expect(await refusal(runId, { choice: "continue" }, "model")).toBe("refused");
    const answered = await client.call("runs.answer", {
      runId,
      answer: { choice: "revise", note: "split step 2" },
      answerer: "human",
    });
    if (answered.kind !== "applied") throw new Error(JSON.stringify(answered));
    const done = await client.view(answered.value.runId, (v) => v.status === "done");
    expect(done.output).toEqual({
      kind: "json",
      value: { decided: { choice: "revise", note: "split step 2" } },
    });
    expect(answeredBy(answered.value.runId)).toMatchObject({ command: "continue", answeredBy: "human" });
  });

  it("takes the stated default when the deadline passes, recorded as automatic", async () => {
    const view = await waitingGate(", deadlineMs: 1_000");
    const deadline = view.checkpoint?.deadline;
    expect(deadline?.answer).toEqual({ choice: "continue", automatic: "deadline" });
    let childId = "";
    for (let tries = 0; childId === "" && tries < 200; tries += 1) {
      await new Promise((r) => setTimeout(r, 50));
      childId = (await client.call("runs.get", { runId: view.runId }))?.continuedAs ?? "";
    }
    const child = await client.view(childId, (v) => v.status === "done", 20_000);
    expect(Date.now()).toBeGreaterThanOrEqual(deadline?.at ?? Number.POSITIVE_INFINITY);
    expect(child.output).toEqual({
      kind: "json",
      value: { decided: { choice: "continue", automatic: "deadline" } },
    });
    expect(answeredBy(childId)).toEqual({
      command: "continue",
      parentRunId: view.runId,
      answeredBy: "automatic",
    });
    // Answered once: the parent no longer wakes, and a late person's answer finds it answered.
    expect(readState(box, (store) => store.listDueRuns(Date.now() + 60_000, 10))).toEqual([]);
    const late = await client.call("runs.answer", {
      runId: view.runId,
      answer: { choice: "stop" },
      answerer: "human",
    });
    expect(late).toMatchObject({ kind: "conflict", evidence: { kind: "child_exists", childRunId: childId } });
  });

  it("a person's answer before the deadline stops the clock from answering", async () => {
    const view = await waitingGate(", deadlineMs: 1_000");
    const answered = await client.call("runs.answer", {
      runId: view.runId,
      answer: { choice: "stop" },
      answerer: "human",
    });
    if (answered.kind !== "applied") throw new Error(JSON.stringify(answered));
    await client.view(answered.value.runId, (v) => v.status === "done");
    await new Promise((r) => setTimeout(r, 1_500));
    const runs = readState(box, (store) => store.listRuns({}).map((r) => r.runId));
    expect(runs).toHaveLength(2);
    expect(answeredBy(answered.value.runId)).toMatchObject({ answeredBy: "human" });
  });
});
