import { appendFileSync, existsSync, rmSync } from "node:fs";
import { afterEach, describe, expect, it } from "vitest";
import { isAlive, lines, waitFor } from "@piw/test-kit";
import { TestHost } from "./host-harness.js";

let host: TestHost;
afterEach(async () => {
  await host.cleanup();
});

/** A compute node and a shell node; the file writes `marker` when it is evaluated and when it runs. */
function greetWorkflow(marker: string): string {
  return `import { appendFileSync } from "node:fs";
import { compute, defineWorkflow, shell } from "piw";
import { z } from "zod";

appendFileSync(${JSON.stringify(marker)}, "loaded\\n");

export default defineWorkflow({
  name: "greet",
  input: z.object({ task: z.string() }),
  startAt: "greet",
  nodes: {
    greet: compute({
      run: ({ input }) => {
        appendFileSync(${JSON.stringify(marker)}, "ran\\n");
        console.log("stray output from workflow code");
        return "hello " + (input as { task: string }).task;
      },
    }),
    echo: shell({
      exec: ({ outputs }) => ["echo", String(outputs.greet)],
      parse: ({ stdout }) => ({ said: stdout }),
      timeoutMs: 10_000,
    }),
  },
  edges: { greet: { to: "echo" }, echo: { to: "done" } },
});
`;
}

/** One shell node that records its process group leader and a grandchild, then waits for a long time. */
function slowWorkflow(pidFile: string): string {
  return `import { defineWorkflow, shell } from "piw";

export default defineWorkflow({
  name: "slow",
  startAt: "wait",
  nodes: {
    wait: shell({ exec: { shell: ${JSON.stringify(`echo $$ > ${pidFile}; sleep 60 & echo $! >> ${pidFile}; wait`)} } }),
  },
  edges: { wait: { to: "done" } },
});
`;
}

/** Write and prepare the greet workflow; the marker is cleared after the test's own preflight load. */
async function prepareGreet(
  overrides: Parameters<TestHost["prepare"]>[2] = {},
): Promise<{ runId: string; marker: string; file: string }> {
  const marker = host.path("marker");
  const file = host.writeWorkflow("greet", greetWorkflow(marker));
  const runId = await host.prepare(file, { task: "world" }, overrides);
  rmSync(marker, { force: true });
  return { runId, marker, file };
}

async function startSlow(): Promise<{ runId: string; pids: () => number[] }> {
  const pidFile = host.path("pids");
  const file = host.writeWorkflow("slow", slowWorkflow(pidFile));
  const runId = await host.prepare(file, null);
  const pids = () => lines(pidFile).map(Number);
  return { runId, pids };
}

describe("piw-worker against a host played by the test", () => {
  it("runs a start command to completion: compute, then shell, every change through the host", async () => {
    host = new TestHost();
    const { runId, marker } = await prepareGreet();
    const worker = host.launch(runId);
    const exit = await worker.exited;

    expect(worker.reports).toEqual([{ kind: "reported", phase: "execute" }]);
    expect(exit).toMatchObject({ code: 0, signal: null });
    expect(host.store.getRun(runId)).toMatchObject({ status: "done", outcome: "completed" });
    expect(host.store.readRunFinalOutput(runId)).toEqual({ said: "hello world" });
    expect(host.store.listRunSteps(runId).map((s) => [s.path, s.status])).toEqual([
      ["greet", "succeeded"],
      ["echo", "succeeded"],
    ]);
    expect(lines(marker)).toEqual(["loaded", "ran"]);
    // Workflow code printing to stdout goes to stderr; the frame channel stays clean.
    expect(worker.stderr()).toContain("stray output from workflow code");
  });

  it("drops an assign push whose data breaks its schema with a log line, and runs once a valid one comes", async () => {
    host = new TestHost();
    const { runId } = await prepareGreet();
    // Started ahead of its launch, as the host starts its idle worker: it waits for `assign`.
    const worker = host.launch(runId, { env: { PIW_LAUNCH_ID: "" } });
    worker.child.stdin.write(`${JSON.stringify({ v: 1, push: "assign", data: { launchId: 7 } })}\n`);
    await waitFor(
      "the invalid assign to be logged",
      () => worker.stderr().includes("ignored an invalid assign frame"),
      15_000,
    );
    expect(worker.calls).toEqual([]);

    worker.peer.push("assign", { launchId: worker.launchId, workingDir: host.dir });
    const exit = await worker.exited;
    expect(exit).toMatchObject({ code: 0, signal: null });
    expect(worker.calls[0]).toBe("worker.hello");
    expect(host.store.getRun(runId)).toMatchObject({ status: "done", outcome: "completed" });
  });

  it("starts its first node after two round trips: hello (run and snapshot with it), then markRunning", async () => {
    host = new TestHost();
    const { runId } = await prepareGreet();
    const worker = host.launch(runId);
    await worker.exited;

    expect(worker.calls.slice(0, worker.calls.indexOf("visit.start") + 1)).toEqual([
      "worker.hello",
      "run.markRunning",
      "visit.start",
    ]);
    expect(host.store.getRun(runId)).toMatchObject({ status: "done", outcome: "completed" });
  });

  it("refuses a command that does not match the saved run before any workflow code runs", async () => {
    host = new TestHost();
    const { runId, marker } = await prepareGreet();
    const worker = host.launch(runId, { command: (claimed) => ({ ...claimed, type: "resume" }) });
    const exit = await worker.exited;

    expect(exit.code).toBe(1);
    expect(worker.reports).toEqual([
      {
        kind: "reported",
        phase: "bootstrap",
        error: { code: "activation_failed", message: expect.stringContaining("expects a start command") },
      },
    ]);
    expect(existsSync(marker)).toBe(false);
    // The refusal ends the run failed; the embedded runtime gives the same outcome for the same command
    // (packages/embedded/test/durability.test.ts).
    expect(host.store.getRun(runId)).toMatchObject({ status: "failed", errorCode: "activation_failed" });
    expect(host.store.readRunError(runId)).toEqual({
      code: "activation_failed",
      message: `Run ${runId} expects a start command, not resume.`,
    });
    expect(host.store.listRunSteps(runId)).toEqual([]);
  });

  it("refuses a stale claim generation the same way", async () => {
    host = new TestHost();
    const { runId, marker } = await prepareGreet();
    const worker = host.launch(runId, {
      command: (claimed) => ({ ...claimed, generation: claimed.generation + 1 }),
    });
    expect((await worker.exited).code).toBe(1);
    expect(worker.reports[0]).toMatchObject({ phase: "bootstrap", error: { code: "activation_failed" } });
    expect(existsSync(marker)).toBe(false);
  });

  it("fails the run with source_changed when the file was edited after the run was prepared", async () => {
    host = new TestHost();
    const { runId, marker, file } = await prepareGreet();
    appendFileSync(file, "// edited after preparing\n");
    const worker = host.launch(runId);
    const exit = await worker.exited;

    expect(exit.code).toBe(1);
    expect(host.store.getRun(runId)).toMatchObject({
      status: "failed",
      outcome: "failed",
      errorCode: "source_changed",
    });
    expect(host.store.readRunError(runId)?.message).toMatch(
      /greet\.workflow\.ts changed since the run was prepared/,
    );
    expect(worker.reports).toEqual([
      { kind: "reported", phase: "bootstrap", error: expect.objectContaining({ code: "source_changed" }) },
    ]);
    // The changed file was never evaluated.
    expect(existsSync(marker)).toBe(false);
  });

  it("fails the run with source_changed when the compiled definition differs from the prepared digest", async () => {
    host = new TestHost();
    const { runId } = await prepareGreet({ definitionDigest: "f".repeat(64) });
    const worker = host.launch(runId);
    expect((await worker.exited).code).toBe(1);
    expect(host.store.getRun(runId)).toMatchObject({ status: "failed", errorCode: "source_changed" });
    // The same saved error as the embedded runtime's for a changed definition.
    const error = {
      code: "source_changed",
      message: "The definition of workflow greet changed since the run was prepared.",
    };
    expect(host.store.readRunError(runId)).toEqual(error);
    expect(worker.reports).toEqual([{ kind: "reported", phase: "bootstrap", error }]);
  });

  it("fails the run with workflow_not_found for a built-in that is not registered", async () => {
    host = new TestHost();
    const { runId } = await prepareGreet({ source: { kind: "builtin", id: "greet", revision: "r1" } });
    const worker = host.launch(runId);
    expect((await worker.exited).code).toBe(1);
    expect(host.store.getRun(runId)).toMatchObject({ status: "failed", errorCode: "workflow_not_found" });
  });

  it("reports a throw from workflow code outside any node as worker_failed and stops its shell node", async () => {
    host = new TestHost();
    const pidFile = host.path("pids");
    const file = host.writeWorkflow(
      "stray",
      `import { compute, defineWorkflow, shell } from "piw";

export default defineWorkflow({
  name: "stray",
  startAt: "schedule",
  nodes: {
    schedule: compute({
      run: () => {
        setTimeout(() => {
          throw new Error("boom from a timer");
        }, 300);
        return "scheduled";
      },
    }),
    wait: shell({ exec: { shell: ${JSON.stringify(`echo $$ > ${pidFile}; sleep 60`)} } }),
  },
  edges: { schedule: { to: "wait" }, wait: { to: "done" } },
});
`,
    );
    const runId = await host.prepare(file, null);
    const worker = host.launch(runId);
    const exit = await worker.exited;

    expect(exit.code).toBe(1);
    expect(worker.reports).toEqual([
      {
        kind: "reported",
        phase: "execute",
        error: { code: "worker_failed", message: "The worker threw an Error." },
      },
    ]);
    // The thrown message may quote input: only the worker's local debug log (its stderr) has it.
    expect(worker.stderr()).toContain("boom from a timer");
    expect(host.store.getRun(runId)).toMatchObject({ status: "failed", errorCode: "worker_failed" });
    const [group] = lines(pidFile).map(Number);
    expect(group).toBeGreaterThan(0);
    await waitFor("the shell node to die", () => !isAlive(group as number), 2_000);
  });

  it("aborts a long shell node on a cancel push and leaves no process of its group behind", async () => {
    host = new TestHost();
    const { runId, pids } = await startSlow();
    const worker = host.launch(runId);
    await waitFor("the shell node to start", () => pids().length === 2, 15_000);
    const [group, grandchild] = pids() as [number, number];
    expect(isAlive(group) && isAlive(grandchild)).toBe(true);

    // The host cancels in its store first, then tells the worker to stop.
    expect(host.store.cancelRun({ runId }).kind).toBe("applied");
    worker.peer.push("cancel", { reason: "user asked" });
    const exit = await worker.exited;

    expect(exit.code).toBe(0);
    expect(worker.reports).toEqual([{ kind: "reported", phase: "execute" }]);
    await waitFor("the process group to die", () => !isAlive(group) && !isAlive(grandchild), 2_000);
    expect(host.store.getRun(runId)).toMatchObject({ status: "cancelled" });
  });

  it("answers a frame nested 3,000 deep with frame_too_deep for its id and still serves what the same write carries after it", async () => {
    host = new TestHost();
    const { runId, pids } = await startSlow();
    const worker = host.launch(runId);
    await waitFor("the shell node to start", () => pids().length === 2, 15_000);
    const [group] = pids() as [number, number];
    const answers: Array<{ id?: unknown; error?: { code: string } }> = [];
    let buffered = "";
    worker.child.stdout.on("data", (chunk: string) => {
      buffered += chunk;
      for (let nl = buffered.indexOf("\n"); nl >= 0; nl = buffered.indexOf("\n")) {
        const frame = JSON.parse(buffered.slice(0, nl)) as { id?: unknown; error?: { code: string } };
        buffered = buffered.slice(nl + 1);
        if (frame.id === "deep" || frame.id === "after") answers.push(frame);
      }
    });

    expect(host.store.cancelRun({ runId }).kind).toBe("applied");
    const deep = `{"v":1,"id":"deep","method":"run.snapshot","params":{"value":${"[".repeat(3_000)}${"]".repeat(3_000)}}}`;
    worker.child.stdin.write(
      `${deep}\n${JSON.stringify({ v: 1, id: "after", method: "run.snapshot", params: {} })}\n${JSON.stringify(
        {
          v: 1,
          push: "cancel",
          data: { reason: "user asked" },
        },
      )}\n`,
    );
    const exit = await worker.exited;

    expect(answers.map((a) => [a.id, a.error?.code])).toEqual([
      ["deep", "frame_too_deep"],
      ["after", "unknown_method"],
    ]);
    // The cancel after them was obeyed: the shell node's group is gone and the worker reported.
    expect(exit.code).toBe(0);
    expect(worker.reports).toEqual([{ kind: "reported", phase: "execute" }]);
    await waitFor("the process group to die", () => !isAlive(group), 2_000);
  });

  it("exits within about a second when its stdin closes, aborting the shell node and writing nothing", async () => {
    host = new TestHost();
    const { runId, pids } = await startSlow();
    const worker = host.launch(runId);
    await waitFor("the shell node to start", () => pids().length === 2, 15_000);
    const [group, grandchild] = pids() as [number, number];

    worker.markStdout();
    const closedAt = Date.now();
    worker.child.stdin.end();
    const exit = await worker.exited;

    expect(exit.code).toBe(2);
    expect(exit.at - closedAt).toBeLessThan(1_000);
    expect(worker.stdoutSinceMark()).toBe(0);
    expect(worker.reports).toEqual([]);
    await waitFor("the process group to die", () => !isAlive(group) && !isAlive(grandchild), 2_000);
    // The host decides what a lost worker means; the worker left the run as it was.
    expect(host.store.getRun(runId)).toMatchObject({ status: "running" });
  });
});
