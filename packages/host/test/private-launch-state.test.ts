import { rmSync } from "node:fs";
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
