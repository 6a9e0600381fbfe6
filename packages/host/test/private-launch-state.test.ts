import { readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { RunningHost } from "../src/index.js";
import { FLOWS, type Sandbox, sandbox, start, TestClient, writeWorkflow } from "./host-fixture.js";

const TOKEN = "tok-PRIVATE-9f3c";

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

describe("a launch that fails before its engine starts", () => {
  it("keeps no input: every view says it was cleared, and a restart is refused with the reason", async () => {
    const flow = await writeWorkflow(box, "count", FLOWS.count);
    const reserved = await client.call(
      "runs.reserve",
      flow.reserve({ n: 1, task: `deploy with token ${TOKEN}` }, { kind: "pi", sessionId: "s-1" }),
    );
    if (reserved.kind !== "applied") throw new Error(JSON.stringify(reserved));
    const { runId } = reserved.value;
    await client.call("runs.subscribe", { runId });
    expect(JSON.stringify(await client.call("runs.get", { runId }))).toContain(TOKEN);
    // The workflow file goes away before the initiating turn settles.
    rmSync(flow.file);
    await client.call("session.settled", { sessionId: "s-1" });
    const failed = await client.view(runId, (v) => v.status === "failed");
    expect(failed.error?.code).toBe("workflow_not_found");
    expect(failed.input).toEqual({ kind: "cleared" });
    expect(failed.inputSummary).toBe("(input cleared)");
    const [row] = await client.call("runs.list", {});
    expect(row?.inputSummary).toBe("(input cleared)");
    const restart = await client.call("runs.restart", { runId });
    expect(restart).toEqual({ kind: "conflict", evidence: { kind: "input_cleared", runId } });
    for (const seen of [
      JSON.stringify(await client.call("runs.get", { runId })),
      JSON.stringify(await client.call("runs.list", {})),
      JSON.stringify(await client.call("runs.history", { runId })),
      lines.join("\n"),
    ]) {
      expect(seen).not.toContain(TOKEN);
    }
  });

  it("a queued run cancelled before it ran says its input was cleared", async () => {
    const flow = await writeWorkflow(box, "count", FLOWS.count);
    const reserved = await client.call(
      "runs.reserve",
      flow.reserve({ n: 1, task: TOKEN }, { kind: "pi", sessionId: "s-2" }),
    );
    if (reserved.kind !== "applied") throw new Error(JSON.stringify(reserved));
    const { runId } = reserved.value;
    await client.call("runs.cancel", { runId });
    const view = await client.call("runs.get", { runId });
    expect(view).toMatchObject({ status: "cancelled", input: { kind: "cleared" } });
    expect(JSON.stringify(view)).not.toContain(TOKEN);
  });
});

/** Records the token it sees before and after a checkpoint; the second half runs in a continuation. */
const ENV_CHECKPOINT = `import { checkpoint, defineWorkflow, shell } from "piw";
import { z } from "zod";
const record = (label: string) =>
  shell({ exec: ["sh", "-c", \`echo "${"$"}{label} $PIW_TEST_TOKEN" >> "$SEEN_FILE"\`] });
export default defineWorkflow({
  name: "envcheck",
  startAt: "before",
  nodes: {
    before: record("before"),
    ask: checkpoint({ prompt: "Go on?", answer: z.object({ go: z.boolean() }) }),
    after: record("after"),
  },
  edges: { before: { to: "ask" }, ask: { to: "after" }, after: { to: "done" } },
});
`;

describe("the starting client's environment", () => {
  it("reaches a run's commands and its continuation's, never the host's own", async () => {
    const flow = await writeWorkflow(box, "envcheck", ENV_CHECKPOINT);
    const seenFile = join(box.dir, "seen.txt");
    const env = {
      PATH: process.env.PATH ?? "/usr/bin:/bin",
      PIW_TEST_TOKEN: "client-env-3d9",
      SEEN_FILE: seenFile,
    };
    expect(process.env.PIW_TEST_TOKEN).toBeUndefined();
    const reserved = await client.call("runs.reserve", { ...flow.reserve(null), env });
    if (reserved.kind !== "applied") throw new Error(JSON.stringify(reserved));
    const { runId } = reserved.value;
    await client.call("runs.subscribe", {});
    await client.view(runId, (v) => v.outcome === "waiting");
    const answered = await client.call("runs.answer", { runId, answer: { go: true }, answerer: "human" });
    if (answered.kind !== "applied") throw new Error(JSON.stringify(answered));
    await client.view(answered.value.runId, (v) => v.status === "done");
    expect(readFileSync(seenFile, "utf8").trim().split("\n")).toEqual([
      "before client-env-3d9",
      "after client-env-3d9",
    ]);
    for (const seen of [
      JSON.stringify(await client.call("runs.get", { runId })),
      JSON.stringify(await client.call("runs.history", { runId: answered.value.runId })),
      lines.join("\n"),
    ]) {
      expect(seen).not.toContain("client-env-3d9");
    }
  });
});
