import { describe, expectTypeOf, it } from "vitest";
import { z } from "zod";
import {
  action,
  agent,
  checkpoint,
  compute,
  decision,
  decisionEdge,
  defineWorkflow,
  includeWorkflow,
  type NodeContext,
  type ScopeContext,
  shell,
  type WaitOutput,
  type WorkflowDefinition,
  wait,
} from "../src/authoring/index.js";

const design = defineWorkflow({
  name: "design",
  input: z.object({ topic: z.string() }),
  startAt: "draft",
  exits: ["ready", "abandoned"],
  nodes: {
    draft: agent({ prompt: "Draft a design", output: z.object({ ok: z.boolean() }) }),
  },
  edges: {
    draft: { to: ["ready", "abandoned"], route: (out) => (out.ok ? "ready" : "abandoned") },
  },
});

describe("authoring types", () => {
  it("infers name, input and exits", () => {
    expectTypeOf(design).toEqualTypeOf<
      WorkflowDefinition<"design", { topic: string }, "ready" | "abandoned">
    >();
  });

  it("accepts a well-formed parent", () => {
    const parent = defineWorkflow({
      name: "parent",
      input: z.object({ task: z.string() }),
      startAt: "plan",
      nodes: {
        plan: compute({ run: ({ input }: NodeContext<{ task: string }>) => input.task.length }),
        check: shell({ exec: ["npm", "test"], parse: ({ stdout }) => stdout.includes("ok") }),
        choose: decision({ choices: ["again", "stop"], decide: () => "stop" }),
      },
      includes: {
        design: includeWorkflow(design, { input: { topic: "x" } }),
      },
      edges: {
        plan: { to: "design" },
        "design.ready": { to: "check" },
        "design.abandoned": { to: "done" },
        check: {
          to: ["choose", "done"],
          route: (ok) => {
            expectTypeOf(ok).toEqualTypeOf<boolean>();
            return ok ? "done" : "choose";
          },
        },
        choose: decisionEdge({ again: "plan", stop: "done" }),
      },
    });
    expectTypeOf(parent.name).toEqualTypeOf<"parent">();
  });

  it("rejects misspellings", () => {
    defineWorkflow({
      name: "bad",
      // @ts-expect-error a misspelled start node
      startAt: "plann",
      nodes: { plan: compute({ run: () => 1 }) },
      edges: { plan: { to: "done" } },
    });
    defineWorkflow({
      name: "bad",
      startAt: "plan",
      nodes: { plan: compute({ run: () => 1 }) },
      // @ts-expect-error a misspelled edge target
      edges: { plan: { to: "dne" } },
    });
    defineWorkflow({
      name: "bad",
      startAt: "plan",
      nodes: {
        plan: compute({ run: () => 1 }),
        choose: decision({ choices: ["a", "b"], decide: () => "a" }),
      },
      edges: {
        plan: { to: "choose" },
        // @ts-expect-error an undecided case
        choose: decisionEdge({ a: "done" }),
      },
    });
    defineWorkflow({
      name: "bad",
      startAt: "plan",
      nodes: {
        plan: compute({ run: () => 1 }),
        choose: decision({ choices: ["a", "b"], decide: () => "a" }),
      },
      edges: {
        plan: { to: "choose" },
        // @ts-expect-error an extra case
        choose: decisionEdge({ a: "done", b: "done", c: "done" }),
      },
    });
    defineWorkflow({
      name: "bad",
      startAt: "design",
      nodes: { plan: compute({ run: () => 1 }) },
      includes: { design: includeWorkflow(design, { input: { topic: "x" } }) },
      edges: {
        plan: { to: "done" },
        "design.ready": { to: "plan" },
        // @ts-expect-error an unknown child exit
        "design.abandonned": { to: "done" },
      },
    });
    // @ts-expect-error wrong child input
    includeWorkflow(design, { input: { topik: "x" } });
  });
});

describe("node context types", () => {
  it("gives unannotated contexts an unknown input", () => {
    defineWorkflow({
      name: "ctx",
      startAt: "a",
      nodes: {
        a: compute({
          run: (ctx) => {
            expectTypeOf(ctx.input).toEqualTypeOf<unknown>();
            return 1;
          },
        }),
        b: agent({
          prompt: (ctx) => {
            expectTypeOf(ctx.input).toEqualTypeOf<unknown>();
            return "p";
          },
          output: z.string(),
        }),
      },
      edges: { a: { to: "b" }, b: { to: "done" } },
    });
  });
});

describe("typed routing", () => {
  it("types route outputs from schemas, answers and parse results", () => {
    defineWorkflow({
      name: "typed",
      startAt: "ask",
      nodes: {
        ask: agent({ prompt: "Rate it", output: z.object({ score: z.number() }) }),
        confirm: checkpoint({ prompt: "Ship?", answer: z.enum(["yes", "no"]) }),
        act: action({ run: async () => ({ id: "x" }) }),
      },
      edges: {
        ask: {
          to: ["confirm", "done"],
          route: (out) => {
            expectTypeOf(out).toEqualTypeOf<{ score: number }>();
            return out.score > 5 ? "done" : "confirm";
          },
        },
        confirm: {
          to: ["act", "done"],
          route: (answer) => {
            expectTypeOf(answer).toEqualTypeOf<"yes" | "no">();
            return answer === "yes" ? "act" : "done";
          },
        },
        act: {
          to: ["done"],
          route: (out) => {
            expectTypeOf(out).toEqualTypeOf<{ id: string }>();
            return "done";
          },
        },
      },
    });
  });

  it("requires an edge for every node and every include exit, and no others", () => {
    defineWorkflow({
      name: "missing",
      startAt: "a",
      nodes: { a: compute({ run: () => 1 }), b: compute({ run: () => 2 }) },
      // @ts-expect-error node b has no edge
      edges: { a: { to: "b" } },
    });
    defineWorkflow({
      name: "extra",
      startAt: "a",
      nodes: { a: compute({ run: () => 1 }) },
      // @ts-expect-error an edge from a misspelled node
      edges: { a: { to: "done" }, aa: { to: "done" } },
    });
    defineWorkflow({
      name: "unrouted",
      startAt: "design",
      nodes: {},
      includes: { design: includeWorkflow(design, { input: { topic: "t" } }) },
      // @ts-expect-error design.abandoned has no edge
      edges: { "design.ready": { to: "done" } },
    });
  });

  it("lets a decision return only its choices and a route only declared names", () => {
    decision({
      choices: ["a", "b"],
      // @ts-expect-error "c" is not a choice
      decide: () => "c",
    });
    defineWorkflow({
      name: "route",
      startAt: "a",
      nodes: { a: compute({ run: () => 1 }) },
      // @ts-expect-error the route returns a name that is no target at all
      edges: { a: { to: ["done"], route: () => "nowhere" } },
    });
  });

  it("checks include inputs: optional without a child schema, typed projection with one", () => {
    const plain = defineWorkflow({
      name: "plain",
      startAt: "a",
      nodes: { a: compute({ run: () => 1 }) },
      edges: { a: { to: "done" } },
    });
    includeWorkflow(plain);
    includeWorkflow(design, {
      input: ({ input }: ScopeContext<{ task: string }>) => ({ topic: input.task }),
    });
    const wrongShape = ({ input }: ScopeContext<{ task: string }>) => ({ subject: input.task });
    // @ts-expect-error the projection returns the wrong shape
    includeWorkflow(design, { input: wrongShape });
    // @ts-expect-error a child with an input schema needs an input
    includeWorkflow(design);
    const untyped: WorkflowDefinition = design;
    includeWorkflow(untyped, { input: 42 });
  });

  it("types wait nodes and retry policies", () => {
    const pause = wait({ ms: 1_000 });
    const until = wait<{ at: string }>({ until: ({ input }) => new Date(input.at) });
    defineWorkflow({
      name: "clock",
      startAt: "pause",
      nodes: { pause, until },
      edges: {
        pause: { to: ["until", "done"], route: (out) => (out.until.length > 0 ? "until" : "done") },
        until: { to: "done" },
      },
    });
    expectTypeOf(pause.kind).toEqualTypeOf<"wait">();
    expectTypeOf<WaitOutput["until"]>().toEqualTypeOf<string>();
    // @ts-expect-error until must return a Date
    wait({ until: () => "tomorrow" });
    // @ts-expect-error a wait takes ms or until, not a prompt
    wait({ prompt: "x" });
    const retry = { attempts: 3, backoff: { initialMs: 100, factor: 2, maxMs: 1_000, jitter: 0.2 } };
    shell({ exec: ["true"], retry });
    action({ run: () => 1, retry: { ...retry, retryOn: { timedOut: true, codes: ["node_failed"] } } });
    agent({ prompt: "p", output: z.string(), retry });
    // @ts-expect-error retryOn codes are error codes
    action({ run: () => 1, retry: { ...retry, retryOn: { codes: ["flaky"] } } });
    // @ts-expect-error a backoff needs its initial wait
    shell({ exec: ["true"], retry: { attempts: 2, backoff: { factor: 2 } } });
    defineWorkflow({
      name: "defaults",
      startAt: "a",
      nodes: { a: shell({ exec: ["true"] }) },
      edges: { a: { to: "done" } },
      defaults: { timeoutMs: { shell: 1_000 }, retry },
    });
  });
});
