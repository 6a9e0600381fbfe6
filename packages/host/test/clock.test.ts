import { readFileSync } from "node:fs";
import { join } from "node:path";
import { type RunView, WAKE_LEAD_MS } from "@piw/protocol";
import { RunStore } from "@piw/store";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { waitFor } from "@piw/test-kit";
import type { RunningHost } from "../src/index.js";
import {
  exited,
  type Sandbox,
  sandbox,
  spawnHostBinary,
  start,
  TestClient,
  writeWorkflow,
} from "./host-fixture.js";

// The host's durable clock with real workers: a wait or a retry pause parks the run with no process,
// the one timer wakes it, a host that was down at the due time wakes it at start, and pause and cancel
// work while it waits. Assertions are about order and counts, never durations.

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

/** mark (an effect that appends to `before`) -> hold (wait `ms`) -> after (an effect appending to `after`). */
const HOLD = `import { appendFileSync } from "node:fs";
import { action, defineWorkflow, wait } from "piw";
import { z } from "zod";
const Input = z.object({ before: z.string(), after: z.string(), ms: z.number() });
const mark = (file: string) => action({
  run: ({ input, effects, node }) =>
    effects.idempotent("append", { file: (input as z.infer<typeof Input>)[file as "before"] }, (req) => {
      appendFileSync((req as { file: string }).file, node.path + "\\n");
      return node.path;
    }),
});
export default defineWorkflow({
  name: "hold",
  input: Input,
  startAt: "mark",
  nodes: {
    mark: mark("before"),
    hold: wait({ until: ({ input }) => new Date(Date.now() + (input as z.infer<typeof Input>).ms) }),
    after: mark("after"),
  },
  edges: { mark: { to: "hold" }, hold: { to: "after" }, after: { to: "done" } },
});
`;

/** One action whose first attempt fails (counted in a file), retried 10 s later. */
const FLAKY = `import { appendFileSync, existsSync, readFileSync } from "node:fs";
import { action, defineWorkflow } from "piw";
import { z } from "zod";
export default defineWorkflow({
  name: "flaky",
  input: z.object({ log: z.string(), initialMs: z.number() }),
  startAt: "call",
  nodes: {
    call: action({
      retry: { attempts: 3, backoff: { initialMs: 10_000 } },
      run: ({ input }) => {
        const { log } = input as { log: string };
        appendFileSync(log, "try\\n");
        const tries = readFileSync(log, "utf8").split("\\n").filter(Boolean).length;
        if (tries < 2) throw new Error("flaky");
        return tries;
      },
    }),
  },
  edges: { call: { to: "done" } },
});
`;

function lines(file: string): string[] {
  try {
    return readFileSync(file, "utf8").split("\n").filter(Boolean);
  } catch {
    return [];
  }
}

function launches(h: RunningHost, runId: string): number {
  return h.reader.listRunEvents(runId).filter((e) => e.type === "worker.launched").length;
}

const parkedOn = (code: string) => (v: RunView) => v.status === "parked" && v.recoveryReason?.code === code;

async function reserve(c: TestClient, body: string, name: string, input: Record<string, unknown>) {
  const flow = await writeWorkflow(box, name, body);
  const reserved = await c.call("runs.reserve", flow.reserve(input as never));
  if (reserved.kind !== "applied") throw new Error(JSON.stringify(reserved));
  await c.call("runs.subscribe", { runId: reserved.value.runId });
  return reserved.value.runId;
}

describe("the host's clock", () => {
  it("parks a waiting run with no worker and wakes it once its time has come", async () => {
    host = await start(box);
    client = await TestClient.connect(host.socketPath);
    const files = { before: join(box.dir, "before"), after: join(box.dir, "after") };
    // Due well beyond the wake lead, so that the run is seen parked with no worker first.
    const runId = await reserve(client, HOLD, "hold", { ...files, ms: WAKE_LEAD_MS + 3_000 });
    const parked = await client.view(runId, parkedOn("waiting"));
    expect(parked.currentWork).toEqual({ kind: "none" });
    // The worker that parked it exits: nothing runs for the run while it waits.
    let workers = [{}];
    while (workers.length > 0) {
      workers = (await client.call("host.status", {})).workers.filter((w) => w.runId === runId);
      if (workers.length > 0) await new Promise((r) => setTimeout(r, 20));
    }
    expect((await client.call("runs.get", { runId }))?.status).toBe("parked");
    const done = await client.view(runId, (v) => v.status === "done", 30_000);
    expect(done.outcome).toBe("completed");
    expect([lines(files.before), lines(files.after)]).toEqual([["mark"], ["after"]]);
    expect(launches(host, runId)).toBe(2);
    const types = host.reader.listRunEvents(runId).map((e) => e.type);
    expect(types.indexOf("run.parked")).toBeLessThan(types.lastIndexOf("run.claimed"));
  }, 60_000);

  it("wakes a wait due within the lead at once; its worker starts the next node at the due time", async () => {
    host = await start(box);
    client = await TestClient.connect(host.socketPath);
    const files = { before: join(box.dir, "before"), after: join(box.dir, "after") };
    const runId = await reserve(client, HOLD, "hold", { ...files, ms: 1_500 });
    const done = await client.view(runId, (v) => v.status === "done", 30_000);
    expect(done.outcome).toBe("completed");
    // One park and one wake: the woken worker slept out the lead instead of parking again.
    expect(launches(host, runId)).toBe(2);
    const types = host.reader.listRunEvents(runId, 0, 1000).map((e) => e.type);
    expect(types.filter((t) => t === "run.parked")).toHaveLength(1);
    const store = RunStore.open({ stateDir: box.stateDir });
    const hold = store.readRunSnapshot(runId).visits.find((v) => v.path === "hold");
    store.close();
    const until = Date.parse((hold?.output as { until: string } | undefined)?.until ?? "");
    const events = host.reader.listRunEvents(runId, 0, 1000);
    const claimed = events.findLast((e) => e.type === "run.claimed");
    const next = events.find((e) => e.type === "node.started" && e.path === "after");
    // Woken before its time, and the next node not started before it.
    expect(claimed?.at).toBeLessThan(until);
    expect(next?.at).toBeGreaterThanOrEqual(until);
    expect(lines(files.after)).toEqual(["after"]);
  }, 60_000);

  it("wakes a wait that parks after a wake pass, due within that pass's lead", async () => {
    host = await start(box);
    client = await TestClient.connect(host.socketPath);
    const files = { before: join(box.dir, "before"), after: join(box.dir, "after") };
    const first = await reserve(client, HOLD, "hold", { ...files, ms: 1_500 });
    // The first run's wake is a pass whose horizon reaches past the second run's due time.
    await waitFor("the first run's wake", () => host && launches(host, first) === 2);
    const second = await reserve(client, HOLD, "hold", { ...files, ms: 100 });
    for (const runId of [first, second]) {
      expect((await client.view(runId, (v) => v.status === "done", 30_000)).outcome).toBe("completed");
    }
    expect(lines(files.after)).toEqual(["after", "after"]);
  }, 60_000);

  it("pause holds a due wait until resume; resume before the time parks it again; cancel wins", async () => {
    host = await start(box);
    client = await TestClient.connect(host.socketPath);
    const files = { before: join(box.dir, "b"), after: join(box.dir, "a") };
    const long = await reserve(client, HOLD, "hold", { ...files, ms: 10 * 60_000 });
    const first = await client.view(long, parkedOn("waiting"));
    // Resumed before its time: a worker reopens the wait, which parks again for the same saved time.
    expect(await client.call("runs.resume", { runId: long })).toMatchObject({ kind: "applied" });
    await waitFor("the resumed wait's launch", () => host && launches(host, long) === 2);
    const again = await client.view(long, (v) => parkedOn("waiting")(v) && v.revision > first.revision);
    expect(again.recoveryReason).toEqual(first.recoveryReason);
    expect(await client.call("runs.pause", { runId: long })).toMatchObject({ kind: "applied" });
    expect((await client.call("runs.cancel", { runId: long })).kind).toBe("applied");
    expect((await client.call("runs.get", { runId: long }))?.status).toBe("cancelled");

    // Due beyond the wake lead, so that the pause comes before the clock wakes it.
    const short = await reserve(client, HOLD, "hold", { ...files, ms: WAKE_LEAD_MS + 2_000 });
    await client.view(short, parkedOn("waiting"));
    expect(await client.call("runs.pause", { runId: short })).toMatchObject({ kind: "applied" });
    const reason = (await client.call("runs.get", { runId: short }))?.recoveryReason;
    const due = reason?.code === "waiting" ? reason.until : 0;
    await new Promise((r) => setTimeout(r, Math.max(0, due - Date.now()) + 300));
    // Due, but paused: the clock left it alone.
    expect(launches(host, short)).toBe(1);
    expect((await client.call("runs.get", { runId: short }))?.status).toBe("parked");
    expect(await client.call("runs.resume", { runId: short })).toMatchObject({ kind: "applied" });
    expect((await client.view(short, (v) => v.status === "done")).outcome).toBe("completed");
    expect(launches(host, short)).toBe(2);
    expect(lines(files.after)).toEqual(["after"]);
  }, 60_000);
});

describe("kill -9 of the host while runs wait", () => {
  it("wakes every due wait and retry once at restart, and re-runs no settled effect", async () => {
    const binary = await spawnHostBinary(box);
    const c = await TestClient.connect(join(box.stateDir, "host.sock"));
    const files = { before: join(box.dir, "before"), after: join(box.dir, "after") };
    const waits: string[] = [];
    // Due well beyond the wake lead, so that the host is killed before its clock wakes any of them.
    for (let i = 0; i < 3; i += 1) {
      waits.push(await reserve(c, HOLD, "hold", { ...files, ms: WAKE_LEAD_MS + 8_000 }));
    }
    const log = join(box.dir, "flaky");
    const retried = await reserve(c, FLAKY, "flaky", { log, initialMs: 10_000 });
    const dueTimes: number[] = [];
    for (const runId of waits) {
      const view = await c.view(runId, parkedOn("waiting"), 60_000);
      if (view.recoveryReason?.code === "waiting") dueTimes.push(view.recoveryReason.until);
    }
    const retry = await c.view(retried, parkedOn("retry_waiting"), 60_000);
    if (retry.recoveryReason?.code === "retry_waiting") {
      expect(retry.recoveryReason).toMatchObject({ attempt: 2, attempts: 3, lastError: "node_failed" });
      dueTimes.push(retry.recoveryReason.at);
    }
    c.close();
    binary.child.kill("SIGKILL");
    await exited(binary.child);
    // Down past every due time: the next host must wake them at start.
    await new Promise((r) => setTimeout(r, Math.max(0, Math.max(...dueTimes) - Date.now()) + 200));
    host = await start(box);
    client = await TestClient.connect(host.socketPath);
    for (const runId of [...waits, retried]) {
      await client.call("runs.subscribe", { runId });
      expect((await client.view(runId, (v) => v.status === "done", 60_000)).outcome).toBe("completed");
      expect(launches(host, runId)).toBe(2);
    }
    expect(lines(files.before)).toEqual(["mark", "mark", "mark"]);
    expect(lines(files.after)).toEqual(["after", "after", "after"]);
    expect(lines(log)).toEqual(["try", "try"]);
    expect(host.reader.readRunFinalOutput(retried)).toBe(2);
  }, 240_000);
});
