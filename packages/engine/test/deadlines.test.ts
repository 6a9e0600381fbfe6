import { problemsOf } from "@piw/test-kit";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import {
  action,
  agent,
  compileWorkflow,
  compute,
  DEFAULT_TIMEOUT_MS,
  defineWorkflow,
  executeRun,
  includeWorkflow,
  MAX_TIMEOUT_MS,
  MemoryRunPort,
  shell,
  type WorkflowDefinition,
} from "../src/index.js";

const timedNodes = {
  ask: agent({ prompt: "p", output: z.string() }),
  run: shell({ exec: ["true"] }),
  act: action({ run: () => 1 }),
  calc: compute({ run: () => 1 }),
};

function timeoutsOf(definition: WorkflowDefinition): Record<string, unknown> {
  const compiled = compileWorkflow(definition);
  return Object.fromEntries(
    [...compiled.nodes].map(([path, node]) => [path, "timeout" in node ? node.timeout : "none of its kind"]),
  );
}

describe("node deadlines", () => {
  it("gives every agent, shell and action node its kind's default, and compute nodes none", () => {
    expect(DEFAULT_TIMEOUT_MS).toEqual({ agent: 1_800_000, shell: 600_000, action: 600_000 });
    const wf = defineWorkflow({
      name: "defaults",
      startAt: "ask",
      nodes: timedNodes,
      edges: { ask: { to: "run" }, run: { to: "act" }, act: { to: "calc" }, calc: { to: "done" } },
    });
    expect(timeoutsOf(wf)).toEqual({
      ask: { kind: "fixed", ms: DEFAULT_TIMEOUT_MS.agent },
      run: { kind: "fixed", ms: DEFAULT_TIMEOUT_MS.shell },
      act: { kind: "fixed", ms: DEFAULT_TIMEOUT_MS.action },
      calc: "none of its kind",
    });
  });

  it("takes the workflow's defaults, a node's own value over them, and null to opt out", () => {
    const perInput = (input: unknown) => (input as { ms: number }).ms;
    const wf = defineWorkflow({
      name: "configured",
      startAt: "ask",
      defaults: { timeoutMs: { agent: 120_000, shell: null, action: perInput } },
      nodes: {
        ask: agent({ prompt: "p", output: z.string() }),
        quick: agent({ prompt: "p", output: z.string(), timeoutMs: 5_000 }),
        run: shell({ exec: ["true"] }),
        act: action({ run: () => 1 }),
        open: action({ run: () => 1, timeoutMs: null }),
      },
      edges: {
        ask: { to: "quick" },
        quick: { to: "run" },
        run: { to: "act" },
        act: { to: "open" },
        open: { to: "done" },
      },
    });
    expect(timeoutsOf(wf)).toEqual({
      ask: { kind: "fixed", ms: 120_000 },
      quick: { kind: "fixed", ms: 5_000 },
      run: { kind: "none" },
      act: { kind: "computed", of: perInput },
      open: { kind: "none" },
    });
  });

  it("applies a workflow's defaults to its own nodes only, not to an included workflow's", () => {
    const child = defineWorkflow({
      name: "child",
      startAt: "c",
      nodes: { c: shell({ exec: ["true"] }) },
      edges: { c: { to: "done" } },
    });
    const parent = defineWorkflow({
      name: "parent",
      startAt: "p",
      defaults: { timeoutMs: { shell: 1_000 } },
      nodes: { p: shell({ exec: ["true"] }) },
      includes: { kid: includeWorkflow(child) },
      edges: { p: { to: "kid" }, "kid.done": { to: "done" } },
    });
    expect(timeoutsOf(parent)).toEqual({
      p: { kind: "fixed", ms: 1_000 },
      "kid/c": { kind: "fixed", ms: DEFAULT_TIMEOUT_MS.shell },
    });
  });

  it("refuses a negative, fractional, too long or non-number timeout, on nodes and in defaults", () => {
    const wf = defineWorkflow({
      name: "bad",
      startAt: "a",
      defaults: { timeoutMs: { agent: 0, decision: 5 } } as never,
      nodes: {
        a: shell({ exec: ["true"], timeoutMs: -1 }),
        b: shell({ exec: ["true"], timeoutMs: 1.5 }),
        c: action({ run: () => 1, timeoutMs: MAX_TIMEOUT_MS + 1 }),
        d: agent({ prompt: "p", output: z.string(), timeoutMs: "10m" as never }),
      },
      edges: { a: { to: "b" }, b: { to: "c" }, c: { to: "d" }, d: { to: "done" } },
    });
    const rule = `timeoutMs must be an integer from 1 to ${MAX_TIMEOUT_MS}, null (no deadline) or a function of the input`;
    expect(problemsOf(wf)).toEqual([
      { path: ":defaults.timeoutMs.agent", message: rule },
      { path: ":defaults.timeoutMs.decision", message: expect.stringContaining('not "decision"') },
      { path: "a", message: rule },
      { path: "b", message: rule },
      { path: "c", message: rule },
      { path: "d", message: rule },
    ]);
  });

  it("computes a deadline from the input when the visit opens and times the node out at it", async () => {
    const seen: unknown[] = [];
    const wf = compileWorkflow(
      defineWorkflow({
        name: "computed",
        input: z.object({ ms: z.number() }),
        startAt: "wait",
        nodes: {
          wait: shell({
            exec: ["sleep", "30"],
            timeoutMs: (input: { ms: number }) => {
              seen.push(input);
              return input.ms;
            },
          }),
        },
        edges: { wait: { to: "done" } },
      }),
    );
    const port = new MemoryRunPort({ input: { ms: 150 } });
    port.status = "running";
    const outcome = await executeRun({ workflow: wf, port });
    expect(seen).toEqual([{ ms: 150 }]);
    expect(outcome).toMatchObject({
      kind: "timed_out",
      error: { code: "node_timed_out", message: "Step wait timed out after 150 ms." },
    });
    expect(port.visits[0]?.status).toBe("timed_out");
  });

  it("fails the node, naming only its path, when a computed deadline is not a valid length", async () => {
    const wf = compileWorkflow(
      defineWorkflow({
        name: "computed-bad",
        startAt: "act",
        nodes: { act: action({ run: () => 1, timeoutMs: () => -5 }) },
        edges: { act: { to: "done" } },
      }),
    );
    const port = new MemoryRunPort();
    port.status = "running";
    const outcome = await executeRun({ workflow: wf, port });
    expect(outcome).toMatchObject({
      kind: "failed",
      error: {
        code: "node_failed",
        message: expect.stringContaining("The timeoutMs function of act returned"),
      },
    });
  });

  it("keeps a reopened visit's first deadline instead of starting a fresh one", async () => {
    // The first attempt saved a deadline that has already passed; the reopened visit (a crash
    // recovery) must time out at once, even though its node would give it 10 minutes again.
    const wf = compileWorkflow(
      defineWorkflow({
        name: "durable",
        startAt: "wait",
        nodes: { wait: shell({ exec: ["sleep", "30"], timeoutMs: 600_000 }) },
        edges: { wait: { to: "done" } },
      }),
    );
    const port = new MemoryRunPort();
    port.status = "running";
    const first = await port.startNodeVisit({ path: "wait", visit: 1, nodeKind: "shell", timeoutMs: 1 });
    expect(first).toMatchObject({ kind: "applied", value: { deadline: { timeoutMs: 1 } } });
    const outcome = await executeRun({ workflow: wf, port });
    expect(outcome).toMatchObject({
      kind: "timed_out",
      error: { message: "Step wait timed out after 1 ms." },
    });
    expect(port.visits[0]).toMatchObject({ attempt: 2, status: "timed_out" });
  });

  it("finishes a reopened visit whose deadline has passed when its work is already done", async () => {
    // The first attempt settles its effect, then its worker is lost (it hangs here) past the deadline.
    let attempts = 0;
    let sideEffects = 0;
    const wf = compileWorkflow(
      defineWorkflow({
        name: "adopted",
        startAt: "act",
        nodes: {
          act: action({
            timeoutMs: 50,
            run: async ({ effects, signal }) => {
              attempts += 1;
              const value = await effects.idempotent("mark", {}, () => {
                sideEffects += 1;
                return "marked";
              });
              if (attempts === 1) {
                await new Promise((_, reject) =>
                  signal.addEventListener("abort", () => reject(signal.reason)),
                );
              }
              return value;
            },
          }),
        },
        edges: { act: { to: "done" } },
      }),
    );
    const port = new MemoryRunPort();
    port.status = "running";
    const lost = executeRun({ workflow: wf, port });
    while (sideEffects === 0) await new Promise((resolve) => setTimeout(resolve, 5));
    const resumed = port.reopen();
    resumed.status = "running";
    // The reservation crosses the worker's channel, so its answer comes a few ms later, as over IPC.
    const reserve = resumed.reserveEffect.bind(resumed);
    resumed.reserveEffect = async (req) => {
      await new Promise((resolve) => setTimeout(resolve, 5));
      return reserve(req);
    };
    await new Promise((resolve) => setTimeout(resolve, 80));
    expect(await executeRun({ workflow: wf, port: resumed })).toEqual({
      kind: "completed",
      output: "marked",
    });
    expect(resumed.visits[0]).toMatchObject({ attempt: 2, status: "succeeded" });
    expect(sideEffects).toBe(1);
    expect(await lost).toMatchObject({ kind: "timed_out" });
  });
});
