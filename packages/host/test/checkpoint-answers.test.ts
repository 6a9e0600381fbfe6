import type { Answerer, JsonValue } from "@piw/protocol";
import { RpcError } from "@piw/protocol";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { RunningHost } from "../src/index.js";
import { type Sandbox, sandbox, start, TestClient, writeWorkflow } from "./host-fixture.js";

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

/** A workflow that waits at `ask` with the given answer schema (and who answers), then returns the answer. */
async function waitingRun(answerSchema: string, answeredBy?: string): Promise<string> {
  const flow = await writeWorkflow(
    box,
    "approve",
    `import { checkpoint, compute, defineWorkflow } from "piw";
import { z } from "zod";
export default defineWorkflow({
  name: "approve",
  input: z.object({}),
  startAt: "ask",
  nodes: {
    ask: checkpoint({ prompt: "Ship it?", answer: ${answerSchema}${answeredBy ? `, answeredBy: "${answeredBy}"` : ""} }),
    apply: compute({ run: ({ outputs }) => ({ answer: outputs.ask }) }),
  },
  edges: { ask: { to: "apply" }, apply: { to: "done" } },
});
`,
  );
  const reserved = await client.call("runs.reserve", flow.reserve({}));
  if (reserved.kind !== "applied") throw new Error(`not reserved: ${JSON.stringify(reserved)}`);
  const { runId } = reserved.value;
  await client.view(runId, (v) => v.status === "done" && v.outcome === "waiting");
  // The worker's exit is recorded just after the run ends; wait for it so the run's revision settles.
  while ((await client.call("host.status", {})).workers.length > 0) {
    await new Promise((r) => setTimeout(r, 20));
  }
  return runId;
}

async function answer(runId: string, value: JsonValue): Promise<string> {
  const answered = await client.call("runs.answer", { runId, answer: value, answerer: "human" });
  if (answered.kind !== "applied") throw new Error(`not answered: ${JSON.stringify(answered)}`);
  return answered.value.runId;
}

async function refusal(runId: string, value: JsonValue, answerer: Answerer = "human"): Promise<RpcError> {
  const error = await client.call("runs.answer", { runId, answer: value, answerer }).then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(error instanceof RpcError)) throw new Error(`expected a refusal, got ${String(error)}`);
  return error;
}

describe("runs.answer checks the answer against the checkpoint's saved schema", () => {
  it("refuses a wrong answer with answer_invalid naming the fields, saves nothing, then takes a correct one", async () => {
    const runId = await waitingRun("z.object({ ship: z.boolean(), note: z.string().max(5).optional() })");
    const before = await client.call("runs.get", { runId });
    const error = await refusal(runId, { ship: "SECRET-yes", note: "SECRET-too-long" });
    expect(error.code).toBe("answer_invalid");
    expect(error.message).toContain("ship: Invalid input: expected boolean");
    expect(error.message).toContain("note:");
    expect(error.message).not.toContain("SECRET");
    expect(Buffer.byteLength(error.message)).toBeLessThanOrEqual(1024);
    // Nothing changed: the parent is as it was and no continuation exists.
    expect(await client.call("runs.get", { runId })).toMatchObject({
      revision: before?.revision,
      status: "done",
      outcome: "waiting",
    });
    expect((await client.call("runs.list", {})).map((r) => r.runId)).toEqual([runId]);

    const child = await answer(runId, { ship: true });
    const done = await client.view(child, (v) => v.status === "done");
    expect(done.outcome).toBe("completed");
    expect(host.reader.readRunFinalOutput(child)).toEqual({ answer: { ship: true } });
  });

  it.each([
    [
      "a refinement",
      "z.object({ n: z.number() }).refine((v) => v.n > 5, 'n must be above 5')",
      { n: 1 },
      { n: 9 },
    ],
    ["a coercion the host cannot check", "z.object({ n: z.coerce.number().min(5) })", { n: "1" }, { n: "9" }],
  ])(
    "leaves the checkpoint answerable when the worker rejects an answer the host let through (%s)",
    async (_what, schema, wrong, right) => {
      const runId = await waitingRun(schema);
      const rejected = await answer(runId, wrong);
      const failed = await client.view(rejected, (v) => v.status === "failed");
      expect(failed.error?.code).toBe("answer_invalid");
      expect(await client.call("runs.get", { runId })).toMatchObject({ status: "done", outcome: "waiting" });

      const child = await answer(runId, right);
      expect(child).not.toBe(rejected);
      await client.view(child, (v) => v.status === "done" && v.outcome === "completed");
      // Still one continuation that counts: a third answer is refused as child_exists.
      expect(await client.call("runs.answer", { runId, answer: right, answerer: "human" })).toMatchObject({
        kind: "conflict",
        evidence: { kind: "child_exists", childRunId: child },
      });
    },
  );
});

describe("runs.answer refuses an answerer the checkpoint does not allow", () => {
  it("refuses the model on a human checkpoint (the default), saves nothing, then takes the person's answer", async () => {
    const runId = await waitingRun("z.object({ ship: z.boolean() })");
    expect(await client.call("runs.get", { runId })).toMatchObject({
      checkpoint: { path: "ask", prompt: "Ship it?", answeredBy: "human" },
    });
    const before = await client.call("runs.get", { runId });
    const error = await refusal(runId, { ship: true }, "model");
    expect(error.code).toBe("refused");
    expect(error.message).toBe(
      `Checkpoint ask of run ${runId} is for a person to answer; the workflow tool cannot answer it. Nothing was saved. Ask the user to answer it (/workflow answer ${runId} <json>, or piw answer).`,
    );
    expect(await client.call("runs.get", { runId })).toMatchObject({ revision: before?.revision });
    expect((await client.call("runs.list", {})).map((r) => r.runId)).toEqual([runId]);
    const child = await answer(runId, { ship: true });
    expect(await client.view(child, (v) => v.status === "done")).toMatchObject({ outcome: "completed" });
  });

  it("refuses a person on a model checkpoint, and takes the model's answer", async () => {
    const runId = await waitingRun("z.object({ ship: z.boolean() })", "model");
    const error = await refusal(runId, { ship: true }, "human");
    expect(error.code).toBe("refused");
    expect(error.message).toContain("is answered by the model");
    const answered = await client.call("runs.answer", { runId, answer: { ship: false }, answerer: "model" });
    expect(answered.kind).toBe("applied");
  });

  it("takes the model on an either checkpoint", async () => {
    const runId = await waitingRun("z.object({ ship: z.boolean() })", "either");
    const answered = await client.call("runs.answer", { runId, answer: { ship: true }, answerer: "model" });
    expect(answered.kind).toBe("applied");
  });

  it("refuses an answer request that does not say who answers", async () => {
    const runId = await waitingRun("z.object({ ship: z.boolean() })");
    const error = await client.call("runs.answer", { runId, answer: { ship: true } } as never).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(RpcError);
    expect((error as RpcError).code).toBe("invalid_params");
  });
});
