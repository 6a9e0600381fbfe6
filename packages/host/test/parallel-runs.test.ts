import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { RunView } from "@piw/protocol";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { isAlive } from "@piw/test-kit";
import type { RunningHost } from "../src/index.js";
import { type Sandbox, sandbox, start, TestClient, writeWorkflow } from "./host-fixture.js";

let box: Sandbox;
let host: RunningHost | undefined;
let client: TestClient | undefined;
beforeEach(() => {
  box = sandbox();
});
afterEach(async () => {
  client?.close();
  client = undefined;
  await host?.stop();
  host = undefined;
  box.cleanup();
});

async function open(): Promise<TestClient> {
  host = await start(box);
  client = await TestClient.connect(host.socketPath);
  await client.call("runs.subscribe", {});
  return client;
}

/** Runs `source` through the host and its real workers, and returns the run's terminal view. */
async function runFlow(name: string, source: string, input: Record<string, string> = {}): Promise<RunView> {
  const c = client ?? (await open());
  const flow = await writeWorkflow(box, name, source);
  const reserved = await c.call("runs.reserve", flow.reserve(input));
  if (reserved.kind !== "applied") throw new Error(JSON.stringify(reserved));
  const { runId } = reserved.value;
  return c.view(
    runId,
    (v) => ["done", "failed", "cancelled"].includes(v.status) && v.currentWork.kind === "none",
    60_000,
  );
}

function stepOf(runId: string, path: string) {
  return host?.reader.listRunSteps(runId).find((s) => s.path === path);
}

const ANY_FLOW = `import { existsSync } from "node:fs";
import { action, defineWorkflow, parallel, shell } from "piw";
import { z } from "zod";

export default defineWorkflow({
  name: "race",
  input: z.object({ pids: z.string() }),
  startAt: "fan",
  nodes: {
    fan: parallel({
      branches: {
        slow: shell({ exec: ({ input }) => ["sh", "-c", 'echo $$ > "$1"; exec sleep 600', "sh", input.pids] }),
        fast: action({
          run: async ({ input }) => {
            while (!existsSync(input.pids)) await new Promise((r) => setTimeout(r, 10));
            return "first";
          },
        }),
      },
      join: "any",
    }),
  },
  edges: { fan: { to: "done" } },
});
`;

const FAILING_FLOW = `import { compute, defineWorkflow, parallel, shell } from "piw";

const fan = () =>
  parallel({
    branches: { bad: shell({ exec: ["sh", "-c", "exit 4"] }), good: compute({ run: () => "fine" }) },
    join: "all",
  });

export default defineWorkflow({
  name: "failing",
  startAt: "unrouted",
  nodes: {
    unrouted: fan(),
  },
  edges: { unrouted: { to: "done" } },
});
`;

const ROUTED_FLOW = `import { compute, defineWorkflow, parallel, shell } from "piw";

export default defineWorkflow({
  name: "routed",
  startAt: "fan",
  nodes: {
    fan: parallel({
      branches: { bad: shell({ exec: ["sh", "-c", "exit 4"] }), good: compute({ run: () => "fine" }) },
      join: "all",
    }),
    recover: compute({ run: ({ failures }) => failures.fan?.message }),
  },
  edges: { fan: { to: "done", onFailure: "recover" }, recover: { to: "done" } },
});
`;

const AT_LEAST_FLOW = `import { compute, defineWorkflow, parallel, shell } from "piw";

export default defineWorkflow({
  name: "quorum",
  startAt: "fan",
  nodes: {
    fan: parallel({
      branches: {
        a: compute({ run: () => "A" }),
        b: shell({ exec: ["sh", "-c", "exit 1"] }),
        c: shell({ exec: ["sh", "-c", "echo C"], parse: (r) => r.stdout }),
      },
      join: { atLeast: 2 },
    }),
  },
  edges: { fan: { to: "done" } },
});
`;

/** Each branch notes when its command starts and ends in one shared log. */
const CAPPED_FLOW = `import { defineWorkflow, parallel, shell } from "piw";
import { z } from "zod";

const step = (name: string) =>
  shell({
    exec: ({ input }) => ["sh", "-c", 'echo "start $2" >> "$1"; sleep 0.3; echo "end $2" >> "$1"', "sh", input.log, name],
  });

export default defineWorkflow({
  name: "capped",
  input: z.object({ log: z.string() }),
  startAt: "fan",
  nodes: {
    fan: parallel({ branches: { a: step("a"), b: step("b"), c: step("c"), d: step("d") }, join: "all", concurrency: 2 }),
  },
  edges: { fan: { to: "done" } },
});
`;

/** Two branches wait (for different times) while a third works: the run parks on the clock and goes on. */
const WAITING_FLOW = `import { compute, defineWorkflow, parallel, wait } from "piw";

export default defineWorkflow({
  name: "waiting",
  startAt: "fan",
  nodes: {
    fan: parallel({
      branches: { soon: wait({ ms: 2_500 }), later: wait({ ms: 3_500 }), work: compute({ run: () => "worked" }) },
      join: "all",
    }),
    report: compute({ run: ({ outputs }) => Object.keys(outputs.fan as object).sort() }),
  },
  edges: { fan: { to: "report" }, report: { to: "done" } },
});
`;

describe("parallel nodes through the host and real workers", () => {
  it("parks a run whose branches wait, and the host's clock wakes it for each of their times", async () => {
    const view = await runFlow("waiting", WAITING_FLOW);
    expect(view.status).toBe("done");
    expect(view.output).toEqual({ kind: "json", value: ["later", "soon", "work"] });
    const events = host?.reader.listRunEvents(view.runId).map((e) => e.type) ?? [];
    expect(events.filter((type) => type === "run.parked").length).toBeGreaterThanOrEqual(1);
    // The later wait did not end with the earlier one: no sooner than 3.5 s after the run was created.
    const later = stepOf(view.runId, "fan/later/later");
    expect(later?.status).toBe("succeeded");
    expect((later?.finishedAt ?? 0) - view.createdAt).toBeGreaterThanOrEqual(3_500);
  }, 90_000);

  it("joins any: the winner's output, and the loser's real command is killed and its visit saved cancelled", async () => {
    const pids = join(box.dir, "pids");
    const view = await runFlow("race", ANY_FLOW, { pids });
    expect(view.status).toBe("done");
    expect(view.output).toEqual({ kind: "json", value: { fast: "first" } });
    const pid = Number(readFileSync(pids, "utf8"));
    expect(isAlive(pid)).toBe(false);
    expect(stepOf(view.runId, "fan/slow/slow")).toMatchObject({ status: "failed", errorCode: "cancelled" });
  }, 90_000);

  it("fails the run on an unrouted branch failure and names the branch", async () => {
    const view = await runFlow("failing", FAILING_FLOW);
    expect(view.status).toBe("failed");
    expect(view.error).toEqual({
      code: "node_failed",
      message: "Branch bad of unrouted failed: Command of unrouted/bad/bad exited with code 4.",
    });
    expect(stepOf(view.runId, "unrouted/good/good")?.status).toBe("succeeded");
  }, 90_000);

  it("routes a failed join with onFailure", async () => {
    const view = await runFlow("routed", ROUTED_FLOW);
    expect(view.status).toBe("done");
    expect(view.output).toEqual({
      kind: "json",
      value: "Branch bad of fan failed: Command of fan/bad/bad exited with code 4.",
    });
  }, 90_000);

  it("joins atLeast 2 of 3 with one failure", async () => {
    const view = await runFlow("quorum", AT_LEAST_FLOW);
    expect(view.output).toEqual({ kind: "json", value: { a: "A", c: "C" } });
  }, 90_000);

  it("never runs more branches at once than the concurrency cap", async () => {
    const log = join(box.dir, "capped.log");
    const view = await runFlow("capped", CAPPED_FLOW, { log });
    expect(view.status).toBe("done");
    const events = existsSync(log) ? readFileSync(log, "utf8").split("\n").filter(Boolean) : [];
    expect(events).toHaveLength(8);
    let open = 0;
    let most = 0;
    for (const event of events) {
      open += event.startsWith("start") ? 1 : -1;
      most = Math.max(most, open);
    }
    expect(most).toBe(2);
  }, 90_000);
});
