import { execFileSync } from "node:child_process";
import { closeSync, constants, openSync } from "node:fs";
import { join } from "node:path";
import type { AgentProgress, RunView } from "@piw/protocol";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  fakeAgentHome,
  type FakeModel,
  lastToolResultText,
  startFakeModel,
  toolCall,
  waitFor,
} from "@piw/test-kit";
import type { RunningHost } from "../src/index.js";
import { type Sandbox, sandbox, start, TestClient, TSX_ENV, writeWorkflow } from "./host-fixture.js";

// Two isolated agent steps in two parallel branches of one run, each in a real Pi SDK session in the
// real worker, talking to a scripted model on 127.0.0.1. Each step's `read` is of a named pipe, so it
// stays open until the test writes to it: both steps are running their tool call at once.
const SLOW = 150_000;
/** How long one view may take to come. */
const VIEW_WAIT = 45_000;

let box: Sandbox;
let model: FakeModel;
let host: RunningHost;
let client: TestClient;

const FLOW = `import { agent, defineWorkflow, parallel } from "piw";
import { z } from "zod";

const check = (name: string) =>
  agent({
    session: "isolated",
    tools: ["read"],
    prompt: \`CHECK-\${name}: read the gate and submit who you are.\`,
    output: z.object({ who: z.string() }),
  });

export default defineWorkflow({
  name: "two-agents",
  startAt: "fan",
  nodes: { fan: parallel({ branches: { alpha: check("ALPHA"), beta: check("BETA") }, join: "all" }) },
  edges: { fan: { to: "done" } },
});
`;

beforeAll(async () => {
  box = sandbox();
  model = await startFakeModel();
  // The worker's isolated sessions use a Pi agent dir in the sandbox whose model is the fake.
  const agent = fakeAgentHome(box.dir, { model });
  host = await start(box, { workerEnv: { ...TSX_ENV, ...agent.env } });
  client = await TestClient.connect(host.socketPath);
  await client.call("runs.subscribe", {});
});

afterAll(async () => {
  client?.close();
  await host?.stop();
  await model?.close();
  box?.cleanup();
});

const stateOf = (view: RunView, path: string) => view.nodes.find((n) => n.path === path)?.state;

/**
 * Lets the step's read of its pipe end: whenever a reader waits on the pipe, opens it for writing and
 * closes it, so the reader sees the end of the file (Pi's read tool opens the file more than once),
 * until the step's visit has succeeded.
 */
async function release(gate: string, runId: string, path: string): Promise<void> {
  await waitFor(
    `${path} to finish once its read returns`,
    () => {
      try {
        closeSync(openSync(gate, constants.O_WRONLY | constants.O_NONBLOCK));
      } catch {
        // No reader waits on the pipe now.
      }
      return client.views.some((v) => v.runId === runId && stateOf(v, path) === "succeeded");
    },
    VIEW_WAIT,
  );
}

const own = (view: RunView, path: string): AgentProgress | undefined =>
  view.agentActivity?.find((p) => p.path === path);

describe("isolated agent steps running at once in two parallel branches", () => {
  it(
    "the run view carries each running step's own activity under its path, and drops it when its visit ends",
    async () => {
      const gates = { ALPHA: join(box.dir, "alpha.gate"), BETA: join(box.dir, "beta.gate") };
      for (const gate of Object.values(gates)) execFileSync("mkfifo", [gate]);
      model.reply((r) => {
        const said = JSON.stringify(r.messages);
        const who = said.includes("CHECK-ALPHA") ? "ALPHA" : said.includes("CHECK-BETA") ? "BETA" : undefined;
        if (who === undefined) return undefined;
        if (lastToolResultText(r) === undefined) return toolCall("read", { path: gates[who] });
        return toolCall("workflow", { action: "submit", output: { who } });
      });
      const flow = await writeWorkflow(box, "two-agents", FLOW);
      const reserved = await client.call("runs.reserve", flow.reserve({}));
      if (reserved.kind !== "applied") throw new Error(JSON.stringify(reserved));
      const { runId } = reserved.value;

      const both = await client
        .view(
          runId,
          (v) => own(v, "fan/alpha/alpha") !== undefined && own(v, "fan/beta/beta") !== undefined,
          VIEW_WAIT,
        )
        .catch((error: unknown) => {
          const last = client.views.filter((v) => v.runId === runId).at(-1);
          throw new Error(
            `${String(error)}; model: ${model.errors.join("; ")}; last: ${JSON.stringify({ nodes: last?.nodes.map((n) => [n.path, n.state]), a: last?.agentActivity, p: last?.agentProgress, e: last?.error })}`,
          );
        });
      expect(own(both, "fan/alpha/alpha")).toMatchObject({
        visit: 1,
        kind: "tool",
        toolCalls: 1,
        text: expect.stringContaining("alpha.gate"),
      });
      expect(own(both, "fan/beta/beta")).toMatchObject({
        visit: 1,
        kind: "tool",
        toolCalls: 1,
        text: expect.stringContaining("beta.gate"),
      });
      // Both visits are running, and the run's latest fact is one of them (for readers of old).
      const running = both.nodes.filter((n) => n.state === "running").map((n) => n.path);
      expect(running).toEqual(expect.arrayContaining(["fan/alpha/alpha", "fan/beta/beta"]));
      expect(["fan/alpha/alpha", "fan/beta/beta"]).toContain(both.agentProgress?.path);

      // Alpha ends while beta still waits: the view keeps only beta's activity.
      await release(gates.ALPHA, runId, "fan/alpha/alpha");
      const alphaDone = await client.view(
        runId,
        (v) => stateOf(v, "fan/alpha/alpha") === "succeeded",
        VIEW_WAIT,
      );
      expect(alphaDone.agentActivity?.map((p) => p.path)).toEqual(["fan/beta/beta"]);

      await release(gates.BETA, runId, "fan/beta/beta");
      const done = await client.view(
        runId,
        (v) => v.status === "done" && v.currentWork.kind === "none",
        VIEW_WAIT,
      );
      expect(done.agentActivity).toBeUndefined();
      // The run's last fact outlives its visit: the last view still shows an accepted output.
      expect(done.agentProgress?.kind).toBe("submitted");
      model.assertNoErrors();
    },
    SLOW,
  );
});
