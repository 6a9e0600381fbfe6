import { readFileSync } from "node:fs";
import { join } from "node:path";
import { compileWorkflow, compute, defineWorkflow, type NodeContext, shell } from "@piw/engine";
import { afterEach, describe, expect, it } from "vitest";
import { abandonAfter, type Harness, openRuntime } from "./harness.js";

let h: Harness;
afterEach(() => h.cleanup());

const source = { kind: "builtin" as const, id: "test", revision: "1" };

/** Every byte of the state directory's database files, to prove what was (not) saved. */
function stateBytes(): Buffer {
  const dir = h.stateDir;
  return Buffer.concat(
    ["state.db-wal", "state.db"].map((name) => {
      try {
        return readFileSync(join(dir, name));
      } catch {
        return Buffer.alloc(0);
      }
    }),
  );
}

/** `test` exits with `code` after printing to both streams; `fix` reports what it saw of the failure. */
function testAndFix(code: number, routes: Record<string, unknown>) {
  return compileWorkflow(
    defineWorkflow({
      name: "tf",
      startAt: "test",
      nodes: {
        test: shell({
          exec: ["sh", "-c", `echo "1 failing: parser"; echo "AssertionError: boom" >&2; exit ${code}`],
        }),
        fix: compute({ run: ({ failures }: NodeContext) => failures }),
      },
      edges: { test: { to: "done", ...routes } as never, fix: { to: "done" } },
    }),
  );
}

describe("outcome routing against the real store", () => {
  it("routes a shell's exit code to the fix step, which sees the code, the message and the report", async () => {
    h = openRuntime();
    const wf = testAndFix(3, { onExitCode: { 3: "fix" } });
    const { runId, outcome } = await h.runtime.run({ workflow: wf, source, input: null });
    expect(outcome).toEqual({
      kind: "completed",
      output: {
        test: {
          status: "failed",
          code: "node_failed",
          message: "Command of test exited with code 3.",
          shell: { exitCode: 3, stdout: "1 failing: parser", stderr: "AssertionError: boom" },
        },
      },
    });
    expect(h.store.getRun(runId)).toMatchObject({ status: "done", outcome: "completed" });
    expect(h.store.listRunSteps(runId).map((s) => [s.path, s.status, s.errorCode, s.nextPath])).toEqual([
      ["test", "failed", "node_failed", "fix"],
      ["fix", "succeeded", null, null],
    ]);
    const events = h.store.listRunEvents(runId).map((e) => e.type);
    expect(events).toEqual(expect.arrayContaining(["node.failed", "node.started", "node.succeeded"]));
    expect(events).not.toContain("run.failed");
  });

  it("ends the run on a failure without a route, as before, and keeps nothing the command printed", async () => {
    h = openRuntime();
    const wf = testAndFix(4, { onExitCode: { 3: "fix" } });
    const { runId, outcome } = await h.runtime.run({ workflow: wf, source, input: null });
    expect(outcome).toEqual({
      kind: "failed",
      error: { code: "node_failed", message: "Command of test exited with code 4." },
    });
    expect(h.store.getRun(runId)).toMatchObject({ status: "failed", outcome: "failed" });
    expect(h.store.listRunSteps(runId).map((s) => [s.path, s.status, s.nextPath])).toEqual([
      ["test", "failed", null],
    ]);
    expect(h.store.readRunSnapshot(runId).visits[0]?.output).toBeUndefined();
    expect(stateBytes().includes(Buffer.from("AssertionError: boom"))).toBe(false);
  });

  it("takes onFailure for any other exit code, and the fix can loop back until the test passes", async () => {
    h = openRuntime();
    let runs = 0;
    const wf = compileWorkflow(
      defineWorkflow({
        name: "loop",
        startAt: "test",
        nodes: {
          test: shell({ exec: () => ["sh", "-c", `exit ${runs++ === 0 ? 9 : 0}`] }),
          fix: compute({ run: ({ failures }) => failures.test?.shell?.exitCode }),
          report: compute({ run: ({ failures, outputs }) => ({ failures, fixed: outputs.fix }) }),
        },
        edges: {
          test: { to: "report", onFailure: "fix", onExitCode: { 1: "report" } },
          fix: { to: "test" },
          report: { to: "done" },
        },
      }),
    );
    const { runId, outcome } = await h.runtime.run({ workflow: wf, source, input: null });
    // The second test visit succeeded: its failure is gone from `failures`.
    expect(outcome).toEqual({ kind: "completed", output: { failures: {}, fixed: 9 } });
    expect(h.store.listRunSteps(runId).map((s) => `${s.path}#${s.visit}:${s.status}`)).toEqual([
      "test#1:failed",
      "fix#1:succeeded",
      "test#2:succeeded",
      "report#1:succeeded",
    ]);
  });

  it("routes a timed-out visit by onTimeout, and a thrown error by onFailure", async () => {
    h = openRuntime();
    const wf = compileWorkflow(
      defineWorkflow({
        name: "slow",
        startAt: "wait",
        nodes: {
          wait: shell({ exec: ["sleep", "30"], timeoutMs: 300 }),
          boom: compute({
            run: (): number => {
              throw new Error("secret detail");
            },
          }),
          late: compute({ run: ({ failures }) => failures }),
          broken: compute({ run: ({ failures }) => failures }),
        },
        edges: {
          wait: { to: "done", onTimeout: "boom", onFailure: "broken" },
          boom: { to: "done", onFailure: "late" },
          late: { to: "done" },
          broken: { to: "done" },
        },
      }),
    );
    const { runId, outcome } = await h.runtime.run({ workflow: wf, source, input: null });
    expect(outcome).toEqual({
      kind: "completed",
      output: {
        wait: { status: "timed_out", code: "node_timed_out", message: "Step wait timed out after 300 ms." },
        boom: { status: "failed", code: "node_failed", message: "Compute node boom threw an Error." },
      },
    });
    expect(h.store.listRunSteps(runId).map((s) => [s.path, s.status])).toEqual([
      ["wait", "timed_out"],
      ["boom", "failed"],
      ["late", "succeeded"],
    ]);
  });

  it("resumes after a crash in the fix step with the failure rebuilt from the store, never re-running the test", async () => {
    h = openRuntime();
    let hang = true;
    let tests = 0;
    const wf = compileWorkflow(
      defineWorkflow({
        name: "crash",
        startAt: "test",
        nodes: {
          test: shell({ exec: () => ["sh", "-c", `echo run ${++tests}; exit 2`] }),
          fix: compute({
            run: async ({ failures }) => {
              if (hang) await new Promise(() => {});
              return failures.test?.shell?.stdout;
            },
          }),
        },
        edges: { test: { to: "done", onExitCode: { 2: "fix" } }, fix: { to: "done" } },
      }),
    );
    const runId = h.runtime.reserve({ workflow: wf, source, input: null });
    const first = h.runtime.activate(runId);
    await abandonAfter(h.runtime.execute(first, wf), 1000);
    expect(h.store.listRunSteps(runId).map((s) => [s.path, s.status])).toEqual([
      ["test", "failed"],
      ["fix", "running"],
    ]);
    hang = false;
    expect(
      h.store.parkRun(first.port.fence, { code: "worker_lost", message: "worker died", launchId: "l-1" })
        .kind,
    ).toBe("applied");
    const second = h.runtime.activate(runId);
    expect(await h.runtime.execute(second, wf)).toEqual({ kind: "completed", output: "run 1" });
    expect(tests).toBe(1);
  });
});
