import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { RunningHost } from "../src/index.js";
import { finished, type Sandbox, sandbox, start, TestClient, writeWorkflow } from "./host-fixture.js";

const NODES = 200;

/** A chain of pure steps (computes, every tenth a decision) whose output counts the nodes it passed. */
function chainFlow(): string {
  const nodes = Array.from({ length: NODES }, (_, i) => {
    const previous = i === 0 ? "0" : `(outputs.n${i - 1} as number)`;
    return i % 10 === 9
      ? `    n${i}: decision({ choices: ["on"], decide: () => "on" }),`
      : `    n${i}: compute({ run: ({ outputs }) => ${i === 0 ? "1" : `${i % 10 === 0 ? `(outputs.n${i - 2} as number)` : previous} + 1`} }),`;
  });
  const edges = Array.from({ length: NODES }, (_, i) => {
    const to = i + 1 < NODES ? `n${i + 1}` : "done";
    return i % 10 === 9 ? `    n${i}: decisionEdge({ on: "${to}" }),` : `    n${i}: { to: "${to}" },`;
  });
  return `import { compute, decision, decisionEdge, defineWorkflow } from "piw";

export default defineWorkflow({
  name: "chain",
  startAt: "n0",
  maxSteps: ${NODES + 10},
  nodes: {
${nodes.join("\n")}
  },
  edges: {
${edges.join("\n")}
  },
});
`;
}

let box: Sandbox;
let host: RunningHost | undefined;
let client: TestClient | undefined;
beforeEach(() => {
  box = sandbox();
});
afterEach(async () => {
  client?.close();
  await host?.stop();
  host = undefined;
  box.cleanup();
});

describe("pipelined pure steps through a real worker and host", () => {
  it("commits a chain of pure nodes in far fewer transactions than nodes, and saves every visit as before", async () => {
    const groups: number[] = [];
    host = await start(box, { onGroupCommit: (requests) => groups.push(requests) });
    client = await TestClient.connect(host.socketPath);
    const flow = await writeWorkflow(box, "chain", chainFlow());
    const reserved = await client.call("runs.reserve", flow.reserve(null));
    if (reserved.kind !== "applied") throw new Error(JSON.stringify(reserved));
    const { runId } = reserved.value;
    const view = await finished(client, runId);
    expect(view.status).toBe("done");
    const reader = host.reader;
    const steps = reader.listRunSteps(runId);
    expect(steps.map((s) => `${s.path}:${s.visit}:${s.status}`)).toEqual(
      Array.from({ length: NODES }, (_, i) => `n${i}:1:succeeded`),
    );
    // Nine computes in each ten count up; the decision passes its choice on, skipped by the next.
    expect(reader.readRunFinalOutput(runId)).toBe("on");
    expect(reader.getRun(runId)).toHaveProperty("outcome", "completed");
    // Every visit's advance was committed, yet in a few shared transactions: one write per node
    // alone would take more than NODES commits.
    const requests = groups.reduce((sum, n) => sum + n, 0);
    expect(requests).toBeGreaterThanOrEqual(NODES);
    expect(groups.length).toBeLessThan(NODES / 2);
  }, 120_000);
});
