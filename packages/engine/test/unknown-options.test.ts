import { problemsOf } from "@piw/test-kit";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import {
  action,
  agent,
  checkpoint,
  compileWorkflow,
  compute,
  decision,
  decisionEdge,
  defineWorkflow,
  includeWorkflow,
  notify,
  map,
  parallel,
  shell,
  wait,
  type WorkflowDefinition,
  type WorkflowNode,
} from "../src/index.js";

// An option the compiler does not read would be silently ignored (a `timeoutMs` on a compute node
// never times anything out). Every authored object is checked for fields its kind does not take.

function unchecked(spec: Record<string, unknown>): WorkflowDefinition {
  return defineWorkflow(spec as never);
}

/** One valid node of each kind, and the options its builder accepts. */
const NODES: Record<WorkflowNode["kind"], { node: WorkflowNode; options: string[] }> = {
  agent: {
    node: agent({ prompt: "p", output: z.string() }),
    options: [
      "title",
      "prompt",
      "output",
      "validate",
      "timeoutMs",
      "statusDetail",
      "retry",
      "session",
      "model",
      "thinking",
      "tools",
      "systemPrompt",
      "cwd",
    ],
  },
  compute: { node: compute({ run: () => 1 }), options: ["title", "run"] },
  action: { node: action({ run: () => 1 }), options: ["title", "run", "timeoutMs", "retry"] },
  shell: {
    node: shell({ exec: ["true"] }),
    options: ["title", "exec", "parse", "cwd", "env", "timeoutMs", "retry"],
  },
  notify: { node: notify({ message: "m" }), options: ["title", "message"] },
  checkpoint: {
    node: checkpoint({ prompt: "p", answer: z.boolean() }),
    options: ["title", "prompt", "answer"],
  },
  decision: {
    node: decision({ choices: ["a"], decide: () => "a" }),
    options: ["title", "choices", "decide"],
  },
  wait: { node: wait({ ms: 1 }), options: ["title", "ms", "until"] },
  parallel: {
    node: parallel({ branches: { a: compute({ run: () => 1 }) }, join: "all" }),
    options: ["title", "branches", "join", "concurrency"],
  },
  map: {
    node: map({ over: () => [1], branch: compute({ run: () => 1 }) }),
    options: ["title", "over", "branch", "join", "concurrency", "maxItems"],
  },
};

const EVERY_OPTION = [...new Set(Object.values(NODES).flatMap(({ options }) => options))];

function workflowWith(node: WorkflowNode): WorkflowDefinition {
  const edge = node.kind === "decision" ? decisionEdge({ a: "done" }) : { to: "done" };
  return unchecked({ name: "w", startAt: "x", nodes: { x: node }, edges: { x: edge } });
}

describe("options a node kind does not take", () => {
  it("compiles each kind as built", () => {
    for (const { node } of Object.values(NODES))
      expect(() => compileWorkflow(workflowWith(node))).not.toThrow();
  });

  it("refuses every option of another kind, and a made-up one, on every kind", () => {
    for (const [kind, { node, options }] of Object.entries(NODES)) {
      for (const option of [...EVERY_OPTION.filter((o) => !options.includes(o)), "retries"]) {
        const problems = problemsOf(workflowWith({ ...node, [option]: 1 } as WorkflowNode));
        expect(problems, `${option} on ${kind}`).toHaveLength(1);
        expect(problems[0]?.path).toBe("x");
        expect(problems[0]?.message).toContain(`${kind} nodes have no option "${option}"`);
      }
    }
  });

  it("says which kinds take timeoutMs and what a compute node takes", () => {
    const node = { ...compute({ run: () => 1 }), timeoutMs: 5_000 } as WorkflowNode;
    expect(problemsOf(workflowWith(node))).toEqual([
      {
        path: "x",
        message:
          'compute nodes have no option "timeoutMs"; only agent, action and shell nodes take it (compute takes: title, run)',
      },
    ]);
  });

  it("bounds a long option name in the message", () => {
    const node = { ...notify({ message: "m" }), ["x".repeat(10_000)]: true } as WorkflowNode;
    const [problem] = problemsOf(workflowWith(node));
    expect(problem?.message.length).toBeLessThan(200);
  });
});

describe("options a workflow, include or edge does not take", () => {
  const child = defineWorkflow({
    name: "child",
    startAt: "a",
    nodes: { a: compute({ run: () => 1 }) },
    edges: { a: { to: "done" } },
  });

  it("refuses an unknown workflow field, at the workflow's own path", () => {
    const problems = problemsOf(
      unchecked({
        name: "w",
        startAt: "a",
        timeoutMs: 1_000,
        nodes: { a: compute({ run: () => 1 }) },
        edges: { a: { to: "done" } },
      }),
    );
    expect(problems).toEqual([
      { path: ":timeoutMs", message: expect.stringContaining('a workflow has no option "timeoutMs"') },
    ]);
  });

  it("refuses an unknown include option", () => {
    const problems = problemsOf(
      unchecked({
        name: "w",
        startAt: "c",
        nodes: {},
        includes: { c: { ...includeWorkflow(child), timeoutMs: 1_000 } },
        edges: { "c.done": { to: "done" } },
      }),
    );
    expect(problems).toEqual([
      { path: "c", message: 'an include has no option "timeoutMs" (includeWorkflow takes: title, input)' },
    ]);
  });

  it("refuses unknown fields on goto, route and decision edges", () => {
    const problems = problemsOf(
      unchecked({
        name: "w",
        startAt: "a",
        exits: ["done", "other"],
        nodes: {
          a: compute({ run: () => 1 }),
          b: compute({ run: () => 1 }),
          d: decision({ choices: ["y"], decide: () => "y" }),
        },
        edges: {
          a: { to: "b", labels: { b: "next" } },
          b: { to: ["d", "done"], route: () => "d", label: "go" },
          d: { ...decisionEdge({ y: "other" }), default: "done" },
        },
      }),
    );
    expect(problems).toEqual([
      { path: "a", message: expect.stringContaining('an edge has no option "labels"') },
      { path: "b", message: expect.stringContaining('an edge has no option "label"') },
      { path: "d", message: expect.stringContaining('a decision edge has no option "default"') },
    ]);
  });
});

describe("where an agent step runs", () => {
  it("checks session and the isolated session's options, and refuses them on a conversation step", () => {
    const base = agent({ prompt: "p", output: z.string() });
    expect(
      problemsOf(
        workflowWith({
          ...base,
          session: "elsewhere",
          model: "no-slash",
          thinking: "lots",
          tools: ["read", 3],
          systemPrompt: 7,
          cwd: "",
        } as unknown as WorkflowNode),
      ).map((p) => p.message),
    ).toEqual([
      'session must be "conversation" or "isolated"',
      'model must be "<provider>/<model id>"',
      "thinking must be one of off, minimal, low, medium, high, xhigh",
      "tools must be an array of Pi tool names",
      "systemPrompt must be a string",
      "cwd must be a non-empty string",
    ]);
    expect(
      problemsOf(workflowWith({ ...base, session: "conversation", tools: ["read"] } as WorkflowNode)),
    ).toEqual([{ path: "x", message: 'tools applies only to an isolated session (session: "isolated")' }]);
    const isolated = agent({
      prompt: "p",
      output: z.string(),
      session: "isolated",
      model: "fake/fake-model",
      thinking: "low",
      tools: ["read", "grep"],
      systemPrompt: "Be brief.",
      cwd: "/tmp",
    });
    const compiled = compileWorkflow(workflowWith(isolated)).nodes.get("x");
    expect(compiled).toMatchObject({
      session: "isolated",
      isolated: { model: "fake/fake-model", thinking: "low", tools: ["read", "grep"], cwd: "/tmp" },
    });
  });
});
