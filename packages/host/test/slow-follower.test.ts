import { afterEach, describe, expect, it } from "vitest";
import { waitFor } from "@piw/test-kit";
import { finished, type Sandbox, sandbox, start, TestClient, writeWorkflow } from "./host-fixture.js";

let box: Sandbox;
let stop: (() => Promise<void>) | undefined;
afterEach(async () => {
  await stop?.();
  box.cleanup();
});

/** A long chain whose every view is large: enough views to overrun a client that reads nothing. */
function chainSource(nodes: number): string {
  const names = Array.from({ length: nodes }, (_, i) => `step_${i}`);
  const nodeLines = names
    .map((n) => `    ${n}: compute({ title: "${"x".repeat(400)}", run: () => 1 }),`)
    .join("\n");
  const edgeLines = names.map((n, i) => `    ${n}: { to: "${names[i + 1] ?? "done"}" },`).join("\n");
  return `import { compute, defineWorkflow } from "piw";
export default defineWorkflow({
  name: "long",
  startAt: "${names[0]}",
  maxSteps: ${nodes + 10},
  nodes: {
${nodeLines}
  },
  edges: {
${edgeLines}
  },
});
`;
}

describe("a follower that stops reading", () => {
  it("keeps its connection and gets the final view once it reads again", async () => {
    box = sandbox();
    const host = await start(box);
    stop = () => host.stop();
    const flow = await writeWorkflow(box, "long", chainSource(600));
    const follower = await TestClient.connect(host.socketPath);
    const driver = await TestClient.connect(host.socketPath);
    const reserved = await driver.call("runs.reserve", flow.reserve(null));
    if (reserved.kind !== "applied") throw new Error(JSON.stringify(reserved));
    const runId = reserved.value.runId;
    await follower.call("runs.subscribe", { runId });
    follower.socket.pause();
    await finished(driver, runId, 120_000);
    follower.socket.resume();
    await waitFor("the final view", () => follower.views.at(-1)?.status === "done", 60_000);
    expect(follower.socket.destroyed).toBe(false);
    expect(follower.views.at(-1)?.nodes.every((n) => n.state === "succeeded")).toBe(true);
    expect(await follower.call("runs.get", { runId })).toMatchObject({ status: "done" });
    follower.close();
    driver.close();
    // A 600-node chain on a loaded 2-core machine: its own waits are bounded above, not by the default.
  }, 240_000);
});
