import type { FinishNodeVisit, NodeProgressReport } from "@piw/protocol";
import { afterEach, describe, expect, it, vi } from "vitest";
import { z } from "zod";
import {
  action,
  checkpoint,
  compileWorkflow,
  compute,
  defineWorkflow,
  executeRun,
  LatestThrottle,
  MemoryRunPort,
  NODE_PROGRESS_INTERVAL_MS,
  ProgressInvalid,
  shell,
} from "../src/index.js";

/** A memory port that also records when each visit's end was saved, beside its progress reports. */
class OrderedPort extends MemoryRunPort {
  readonly log: string[] = [];
  override reportProgress(report: NodeProgressReport): void {
    super.reportProgress(report);
    this.log.push(`progress ${report.path} ${report.state.done}`);
  }
  override finishNodeVisit(req: FinishNodeVisit) {
    this.log.push(`finish ${req.path}`);
    return super.finishNodeVisit(req);
  }
}

function running<P extends MemoryRunPort>(port: P): P {
  port.status = "running";
  return port;
}

afterEach(() => {
  vi.useRealTimers();
});

describe("LatestThrottle", () => {
  it("sends the first value at once, the latest of the rest after the interval, and what waits on flush", () => {
    vi.useFakeTimers();
    let now = 10_000;
    const sent: number[] = [];
    const throttle = new LatestThrottle<number>(
      (v) => sent.push(v),
      250,
      () => now,
    );
    throttle.push(1);
    for (let v = 2; v <= 100; v += 1) throttle.push(v);
    expect(sent).toEqual([1]);
    now += 250;
    vi.advanceTimersByTime(250);
    expect(sent).toEqual([1, 100]);
    throttle.push(101);
    throttle.push(102);
    throttle.flush();
    expect(sent).toEqual([1, 100, 102]);
    // Nothing waits: a flush sends nothing, and the timer the pushes set is gone.
    throttle.flush();
    vi.advanceTimersByTime(1_000);
    expect(sent).toEqual([1, 100, 102]);
    throttle.push(103, true);
    expect(sent).toEqual([1, 100, 102, 103]);
  });
});

describe("ctx.progress", () => {
  it("reports many calls rate-limited, and the last one before the visit's end is saved", async () => {
    const calls = 5_000;
    const wf = compileWorkflow(
      defineWorkflow({
        name: "count",
        startAt: "work",
        nodes: {
          work: compute({
            run: (ctx) => {
              for (let i = 1; i <= calls; i += 1)
                ctx.progress({ done: i, total: calls, message: `item ${i}` });
              ctx.progress({ message: "finishing" });
              return "ok";
            },
          }),
        },
        edges: { work: { to: "done" } },
      }),
    );
    const port = running(new OrderedPort());
    const began = Date.now();
    expect(await executeRun({ workflow: wf, port })).toEqual({ kind: "completed", output: "ok" });
    const elapsed = Date.now() - began;
    const reports = port.progressReports;
    expect(reports[0]).toEqual({
      path: "work",
      visit: 1,
      attempt: 1,
      state: { done: 1, total: calls, message: "item 1" },
    });
    // The message-only update kept done and total.
    expect(reports.at(-1)?.state).toEqual({ done: calls, total: calls, message: "finishing" });
    expect(reports.length).toBeLessThanOrEqual(2 + Math.ceil(elapsed / NODE_PROGRESS_INTERVAL_MS));
    expect(port.log.at(-2)).toBe(`progress work ${calls}`);
    expect(port.log.at(-1)).toBe("finish work");
  });

  it("refuses a bad update with a typed error that the node may catch, and reports nothing for it", async () => {
    const wf = compileWorkflow(
      defineWorkflow({
        name: "caught",
        startAt: "work",
        nodes: {
          work: compute({
            run: (ctx) => {
              ctx.progress({ done: 1, total: 4 });
              try {
                ctx.progress({ done: 5 });
              } catch (error) {
                if (!(error instanceof ProgressInvalid)) throw error;
                return { name: error.name, code: error.code, problem: error.problem };
              }
              return "accepted";
            },
          }),
        },
        edges: { work: { to: "done" } },
      }),
    );
    const port = running(new MemoryRunPort());
    expect(await executeRun({ workflow: wf, port })).toEqual({
      kind: "completed",
      output: {
        name: "ProgressInvalid",
        code: "progress_invalid",
        problem: "done must not be greater than total",
      },
    });
    expect(port.progressReports.map((r) => r.state)).toEqual([{ done: 1, total: 4, message: null }]);
  });

  it("fails the node when the author lets the refusal propagate, saying which field, never the value", async () => {
    const wf = compileWorkflow(
      defineWorkflow({
        name: "uncaught",
        startAt: "work",
        nodes: {
          work: compute({
            run: (ctx) => {
              ctx.progress({ done: -42, message: "secret-token-123" });
              return "never";
            },
          }),
        },
        edges: { work: { to: "done" } },
      }),
    );
    const port = running(new MemoryRunPort({ input: {} }));
    const outcome = await executeRun({ workflow: wf, port });
    expect(outcome).toEqual({
      kind: "failed",
      error: {
        code: "node_failed",
        message: "Compute node work failed: ctx.progress refused the update: done must not be negative.",
      },
    });
    expect(JSON.stringify(port.visits)).not.toContain("secret-token-123");
    expect(port.progressReports).toEqual([]);
  });

  it("is there for actions and shell parses, and checks but drops what a waiting checkpoint's prompt reports", async () => {
    const wf = compileWorkflow(
      defineWorkflow({
        name: "kinds",
        input: z.object({}),
        startAt: "act",
        nodes: {
          act: action({
            run: (ctx) => {
              ctx.progress({ done: 1, total: 1, message: "acted" });
              return 1;
            },
          }),
          sh: shell({
            exec: ["echo", "three"],
            parse: (report, ctx) => {
              ctx.progress({ message: `parsed ${report.stdout}` });
              return report.stdout;
            },
          }),
          ask: checkpoint({
            prompt: (ctx) => {
              ctx.progress({ message: "prompting" });
              return "Go on?";
            },
            answer: z.boolean(),
          }),
        },
        edges: { act: { to: "sh" }, sh: { to: "ask" }, ask: { to: "done" } },
      }),
    );
    const port = running(new MemoryRunPort({ input: {} }));
    const outcome = await executeRun({ workflow: wf, port });
    expect(outcome, JSON.stringify(outcome)).toMatchObject({ kind: "waiting", path: "ask" });
    expect(port.progressReports.map((r) => [r.path, r.state.message])).toEqual([
      ["act", "acted"],
      ["sh", "parsed three"],
    ]);
  });
});
