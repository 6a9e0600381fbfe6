import { WAKE_LEAD_MS } from "@piw/protocol";
import { problemsOf } from "@piw/test-kit";
import { describe, expect, it } from "vitest";
import {
  action,
  compileWorkflow,
  compute,
  defineWorkflow,
  executeRun,
  MemoryRunPort,
  shell,
  wait,
} from "../src/index.js";
import { started } from "./memory-run.js";

/** The compiler's problems as `path: message` lines, to search with `toContain`. */
const problemLines = (definition: Parameters<typeof problemsOf>[0]) =>
  problemsOf(definition).map((problem) => `${problem.path}: ${problem.message}`);

// Wait nodes and retry policies against the in-memory port, which keeps the store's rules for
// clock parks. Each "wake" is a reopen: the state a fresh worker sees when the host wakes the run.

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe("a wait node", () => {
  const waits = (node: ReturnType<typeof wait>) =>
    compileWorkflow(
      defineWorkflow({
        name: "waits",
        startAt: "hold",
        nodes: { hold: node, after: compute({ run: ({ outputs }) => outputs.hold }) },
        edges: { hold: { to: "after" }, after: { to: "done" } },
      }),
    );

  it("parks the run with its due time and no process; a wake after the time goes on", async () => {
    const workflow = waits(wait({ ms: 40 }));
    const first = started(new MemoryRunPort());
    const before = Date.now();
    const parked = await executeRun({ workflow, port: first });
    expect(parked).toEqual({ kind: "parked", reason: "waiting" });
    const reason = first.parkedReason;
    expect(reason).toMatchObject({ code: "waiting", path: "hold", visit: 1 });
    const until = reason?.code === "waiting" ? reason.until : 0;
    expect(until).toBeGreaterThanOrEqual(before + 40);
    expect(first.visits.map((v) => [v.path, v.status])).toEqual([["hold", "running"]]);

    await pause(Math.max(0, until - Date.now()) + 20);
    const woken = started(first.reopen());
    const done = await executeRun({ workflow, port: woken });
    expect(done).toEqual({ kind: "completed", output: { until: new Date(until).toISOString() } });
    expect(woken.visits.map((v) => [v.path, v.visit, v.status])).toEqual([
      ["hold", 1, "succeeded"],
      ["after", 1, "succeeded"],
    ]);
  });

  it("woken earlier than the wake lead (an explicit resume), parks again for the same saved time", async () => {
    const workflow = waits(wait({ ms: WAKE_LEAD_MS + 10 * 60_000 }));
    const first = started(new MemoryRunPort());
    expect(await executeRun({ workflow, port: first })).toEqual({ kind: "parked", reason: "waiting" });
    const early = started(first.reopen());
    expect(await executeRun({ workflow, port: early })).toEqual({ kind: "parked", reason: "waiting" });
    expect(early.parkedReason).toEqual(first.parkedReason);
    expect(early.visits.map((v) => [v.path, v.status])).toEqual([["hold", "running"]]);
  });

  it("goes straight on when `until` is already past, and fails the node on an invalid date", async () => {
    const past = new Date("2020-01-02T03:04:05.000Z");
    const port = started(new MemoryRunPort());
    expect(await executeRun({ workflow: waits(wait({ until: () => past })), port })).toEqual({
      kind: "completed",
      output: { until: past.toISOString() },
    });
    const bad = started(new MemoryRunPort());
    const outcome = await executeRun({
      workflow: waits(wait({ until: () => new Date("not a date") })),
      port: bad,
    });
    expect(outcome).toMatchObject({ kind: "failed", error: { code: "node_failed" } });
    expect(JSON.stringify(outcome)).toContain("no valid Date");
  });

  it("is checked by the compiler: exactly one of ms and until, ms in range", () => {
    const one = (node: unknown) =>
      problemLines(
        defineWorkflow({
          name: "bad-wait",
          startAt: "w",
          nodes: { w: node as ReturnType<typeof wait> },
          edges: { w: { to: "done" } },
        }),
      );
    expect(one({ kind: "wait" }).join()).toContain("exactly one of ms");
    expect(one({ kind: "wait", ms: 1, until: () => new Date() }).join()).toContain("exactly one of ms");
    expect(one({ kind: "wait", ms: -1 }).join()).toContain("ms must be an integer");
    expect(one({ kind: "wait", until: "tomorrow" }).join()).toContain("until must be a function");
  });
});

describe("a retry policy", () => {
  const policy = (attempts: number, extra: object = {}) => ({
    attempts,
    backoff: { initialMs: 0 },
    ...extra,
  });

  it("retries a failed attempt of the same visit: a settled effect is adopted, the failed one runs again", async () => {
    const calls = { prep: 0, flaky: 0 };
    const workflow = compileWorkflow(
      defineWorkflow({
        name: "flaky",
        startAt: "call",
        nodes: {
          call: action({
            retry: policy(3),
            run: async ({ effects }) => {
              await effects.idempotent("prep", { n: 1 }, () => {
                calls.prep += 1;
                return "ready";
              });
              return effects.idempotent("flaky", { n: 1 }, () => {
                calls.flaky += 1;
                if (calls.flaky < 3) throw new Error("service down");
                return "ok";
              });
            },
          }),
        },
        edges: { call: { to: "done" } },
      }),
    );
    let port = started(new MemoryRunPort());
    const reasons: unknown[] = [];
    for (let attempt = 1; attempt <= 2; attempt += 1) {
      expect(await executeRun({ workflow, port })).toEqual({ kind: "parked", reason: "retry_waiting" });
      reasons.push(port.parkedReason);
      port = started(port.reopen());
    }
    expect(await executeRun({ workflow, port })).toEqual({ kind: "completed", output: "ok" });
    expect(calls).toEqual({ prep: 1, flaky: 3 });
    expect(reasons).toMatchObject([
      { code: "retry_waiting", path: "call", visit: 1, attempt: 2, attempts: 3, lastError: "node_failed" },
      { code: "retry_waiting", path: "call", visit: 1, attempt: 3, attempts: 3 },
    ]);
    expect(port.visits.map((v) => [v.path, v.visit, v.status])).toEqual([["call", 1, "succeeded"]]);
  });

  it("fails the run once the attempts are used up, with the last attempt's error", async () => {
    const workflow = compileWorkflow(
      defineWorkflow({
        name: "always",
        startAt: "call",
        nodes: {
          call: action({
            retry: policy(2),
            run: () => {
              throw new Error("no");
            },
          }),
        },
        edges: { call: { to: "done" } },
      }),
    );
    const first = started(new MemoryRunPort());
    expect(await executeRun({ workflow, port: first })).toMatchObject({ kind: "parked" });
    const second = started(first.reopen());
    expect(await executeRun({ workflow, port: second })).toMatchObject({
      kind: "failed",
      error: { code: "node_failed" },
    });
    expect(second.visits.map((v) => v.status)).toEqual(["failed"]);
  });

  it("retries only what retryOn names, and a workflow's defaults.retry covers its shell nodes", async () => {
    const fails = compileWorkflow(
      defineWorkflow({
        name: "picky",
        startAt: "call",
        nodes: {
          call: action({
            retry: policy(5, { retryOn: { timedOut: true } }),
            run: () => {
              throw new Error("not a timeout");
            },
          }),
        },
        edges: { call: { to: "done" } },
      }),
    );
    expect(await executeRun({ workflow: fails, port: started(new MemoryRunPort()) })).toMatchObject({
      kind: "failed",
    });
    const byDefault = compileWorkflow(
      defineWorkflow({
        name: "shell-default",
        startAt: "test",
        nodes: { test: shell({ exec: { shell: "exit 3" } }) },
        edges: { test: { to: "done" } },
        defaults: { retry: { attempts: 2, backoff: { initialMs: 60_000 } } },
      }),
    );
    const port = started(new MemoryRunPort());
    const before = Date.now();
    expect(await executeRun({ workflow: byDefault, port })).toEqual({
      kind: "parked",
      reason: "retry_waiting",
    });
    const reason = port.parkedReason;
    const at = reason?.code === "retry_waiting" ? reason.at : 0;
    expect(at).toBeGreaterThanOrEqual(before + 60_000);
    expect(at).toBeLessThanOrEqual(Date.now() + 60_000);
  });

  it("grows the pause by factor up to maxMs", async () => {
    const workflow = compileWorkflow(
      defineWorkflow({
        name: "backoff",
        startAt: "call",
        nodes: {
          call: action({
            retry: { attempts: 4, backoff: { initialMs: 1_000, factor: 3, maxMs: 5_000 } },
            run: () => {
              throw new Error("no");
            },
          }),
        },
        edges: { call: { to: "done" } },
      }),
    );
    let port = started(new MemoryRunPort());
    const pauses: number[] = [];
    let due = 0;
    for (let i = 0; i < 3; i += 1) {
      // A reopen within the wake lead sleeps until its attempt is due; an earlier one runs it at once.
      const now = Date.now();
      const lower = due - now <= WAKE_LEAD_MS ? Math.max(now, due) : now;
      await executeRun({ workflow, port });
      const upper = Date.now();
      const reason = port.parkedReason;
      const at = reason?.code === "retry_waiting" ? reason.at : Number.NaN;
      due = at;
      // The pause lies between (at − upper) and (at − lower); round to the policy's steps.
      expect(at - upper).toBeLessThanOrEqual([1_000, 3_000, 5_000][i] ?? 0);
      pauses.push(Math.round((at - lower) / 1_000) * 1_000);
      port = started(port.reopen());
    }
    expect(pauses).toEqual([1_000, 3_000, 5_000]);
  });

  it("is checked by the compiler, on nodes and in defaults", () => {
    const wf = (retry: unknown, defaults?: unknown) =>
      defineWorkflow({
        name: "bad-retry",
        startAt: "a",
        nodes: { a: action({ run: () => 1, retry: retry as never }) },
        edges: { a: { to: "done" } },
        ...(defaults === undefined ? {} : { defaults: defaults as never }),
      });
    expect(problemLines(wf({ attempts: 1, backoff: { initialMs: 0 } })).join()).toContain("attempts must be");
    expect(problemLines(wf({ attempts: 2 })).join()).toContain("retry must be");
    expect(problemLines(wf({ attempts: 2, backoff: { initialMs: 0, jitter: 2 } })).join()).toContain(
      "jitter",
    );
    expect(problemLines(wf({ attempts: 2, backoff: { initialMs: 0 }, again: true })).join()).toContain(
      '"again"',
    );
    expect(
      problemLines(wf({ attempts: 2, backoff: { initialMs: 0 }, retryOn: { codes: ["flaky"] } })).join(),
    ).toContain("not an error code");
    expect(
      problemLines(wf(undefined, { retry: { attempts: 0, backoff: { initialMs: 0 } } })).join(),
    ).toContain("defaults.retry");
  });
});
