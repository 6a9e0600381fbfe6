import type { RunRecord } from "@piw/protocol";
import { describe, expect, it } from "vitest";
import {
  action,
  compileWorkflow,
  compute,
  defineWorkflow,
  executeRun,
  MemoryRunPort,
  wait,
} from "../src/index.js";
import { started } from "./memory-run.js";

// The wake lead: the host's clock wakes a run shortly before its due time, and the woken wait or retry
// sleeps in its worker until that time. The in-memory port keeps the store's rules for clock parks;
// each reopen is what a freshly woken worker sees. Assertions are about order and outcomes.

/** The run as the worker reads it after its sleep: a pause was asked for meanwhile. */
function pausedMeanwhile(port: MemoryRunPort): MemoryRunPort {
  port.readRun = async () => ({ paused: true }) as RunRecord;
  return port;
}

const holds = compileWorkflow(
  defineWorkflow({
    name: "holds",
    startAt: "hold",
    nodes: {
      hold: wait({ ms: 300 }),
      after: compute({ run: () => Date.now() }),
    },
    edges: { hold: { to: "after" }, after: { to: "done" } },
  }),
);

function dueOf(port: MemoryRunPort): number {
  const reason = port.parkedReason;
  if (reason?.code === "waiting") return reason.until;
  if (reason?.code === "retry_waiting") return reason.at;
  throw new Error(`not parked on the clock: ${JSON.stringify(reason)}`);
}

describe("a wait woken within the wake lead", () => {
  it("sleeps in the worker until its due time, then goes on", async () => {
    const first = started(new MemoryRunPort());
    expect(await executeRun({ workflow: holds, port: first })).toEqual({ kind: "parked", reason: "waiting" });
    const until = dueOf(first);
    // Woken at once, before the time: no second park, and the next node starts at or after the time.
    const woken = started(first.reopen());
    const done = await executeRun({ workflow: holds, port: woken });
    expect(done.kind).toBe("completed");
    expect((done as { output: number }).output).toBeGreaterThanOrEqual(until);
    expect(woken.parkedReason).toBeNull();
    expect(woken.visits.map((v) => [v.path, v.status])).toEqual([
      ["hold", "succeeded"],
      ["after", "succeeded"],
    ]);
  });

  it("parks again for the same due time when a pause was asked for during the sleep", async () => {
    const first = started(new MemoryRunPort());
    await executeRun({ workflow: holds, port: first });
    const woken = pausedMeanwhile(started(first.reopen()));
    expect(await executeRun({ workflow: holds, port: woken })).toEqual({ kind: "parked", reason: "waiting" });
    expect(woken.parkedReason).toEqual(first.parkedReason);
    expect(woken.visits.map((v) => [v.path, v.status])).toEqual([["hold", "running"]]);
    // Resumed after the pause: the time is past, so it goes on.
    const resumed = started(woken.reopen());
    expect((await executeRun({ workflow: holds, port: resumed })).kind).toBe("completed");
  });

  it("stops when the run is cancelled during the sleep: no park, no next node", async () => {
    const first = started(new MemoryRunPort());
    await executeRun({ workflow: holds, port: first });
    const woken = started(first.reopen());
    const cancel = new AbortController();
    const running = executeRun({ workflow: holds, port: woken, signal: cancel.signal });
    // The cancel comes while the worker sleeps (a run parked again by then would have failed this).
    setTimeout(() => cancel.abort(), 50);
    // Not parked again for the clock: the cancel ended the sleep, and the node, like a stopped command.
    expect(await running).toMatchObject({ kind: "failed", error: { code: "cancelled" } });
    expect(woken.parkedReason).toBeNull();
    expect(woken.visits.find((v) => v.path === "after")).toBeUndefined();
  });
});

describe("a retry woken within the wake lead", () => {
  const flaky = (log: number[]) =>
    compileWorkflow(
      defineWorkflow({
        name: "flaky",
        startAt: "call",
        nodes: {
          call: action({
            retry: { attempts: 2, backoff: { initialMs: 300 } },
            run: () => {
              log.push(Date.now());
              if (log.length < 2) throw new Error("flaky");
              return log.length;
            },
          }),
        },
        edges: { call: { to: "done" } },
      }),
    );

  it("runs the next attempt at its due time, not before", async () => {
    const log: number[] = [];
    const workflow = flaky(log);
    const first = started(new MemoryRunPort());
    expect(await executeRun({ workflow, port: first })).toEqual({ kind: "parked", reason: "retry_waiting" });
    const at = dueOf(first);
    const woken = started(first.reopen());
    expect(await executeRun({ workflow, port: woken })).toEqual({ kind: "completed", output: 2 });
    expect(log).toHaveLength(2);
    expect(log[1]).toBeGreaterThanOrEqual(at);
  });

  it("parks paused, the attempt not run, when a pause was asked for during the sleep", async () => {
    const log: number[] = [];
    const workflow = flaky(log);
    const first = started(new MemoryRunPort());
    await executeRun({ workflow, port: first });
    const woken = pausedMeanwhile(started(first.reopen()));
    expect(await executeRun({ workflow, port: woken })).toEqual({ kind: "parked", reason: "paused" });
    expect(log).toHaveLength(1);
    const resumed = started(woken.reopen());
    expect(await executeRun({ workflow, port: resumed })).toEqual({ kind: "completed", output: 2 });
  });

  it("does not run the attempt when the run is cancelled during the sleep", async () => {
    const log: number[] = [];
    const workflow = flaky(log);
    const first = started(new MemoryRunPort());
    await executeRun({ workflow, port: first });
    const cancel = new AbortController();
    const running = executeRun({ workflow, port: started(first.reopen()), signal: cancel.signal });
    setTimeout(() => cancel.abort(), 50);
    expect(await running).toEqual({ kind: "superseded", detail: "The run was cancelled." });
    expect(log).toHaveLength(1);
  });
});
