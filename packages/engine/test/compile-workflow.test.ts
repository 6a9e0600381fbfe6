import { describe, expect, it } from "vitest";
import { z } from "zod";
import {
  agent,
  checkpoint,
  compileWorkflow,
  defineWorkflow,
  graphManifestSchema,
  notify,
  RoutingError,
  ScopeInputError,
  shell,
} from "../src/index.js";
import { release } from "./fixtures.js";

describe("compileWorkflow", () => {
  it("gives the same child included twice distinct full paths (the execution-identity rule)", () => {
    const compiled = compileWorkflow(release);
    expect([...compiled.nodes.keys()]).toEqual([
      "review",
      "count",
      "workspace/inspect",
      "documentation/write",
      "documentation/workspace/inspect",
    ]);
    const direct = compiled.nodes.get("workspace/inspect");
    const nested = compiled.nodes.get("documentation/workspace/inspect");
    expect(direct).toMatchObject({ name: "inspect", scope: "workspace", kind: "action" });
    expect(nested).toMatchObject({ name: "inspect", scope: "documentation/workspace", kind: "action" });
    expect(compiled.startPath).toBe("workspace/inspect");
  });

  it("routes across include exits with next()", () => {
    const compiled = compileWorkflow(release);
    expect(compiled.next("workspace/inspect", { clean: true })).toEqual({
      kind: "node",
      path: "documentation/workspace/inspect",
    });
    expect(compiled.next("workspace/inspect", { clean: false })).toEqual({ kind: "exit", exit: "failed" });
    expect(compiled.next("documentation/workspace/inspect", { clean: true })).toEqual({
      kind: "node",
      path: "documentation/write",
    });
    // Two levels up: documentation/workspace.broken → documentation's exit written → root's review.
    expect(compiled.next("documentation/workspace/inspect", { clean: false })).toEqual({
      kind: "node",
      path: "review",
    });
    expect(compiled.next("documentation/write", { pages: 3 })).toEqual({ kind: "node", path: "review" });
    expect(compiled.next("review", "redo")).toEqual({ kind: "node", path: "workspace/inspect" });
    expect(compiled.next("review", "ship")).toEqual({ kind: "node", path: "count" });
    expect(compiled.next("count", 4)).toEqual({ kind: "exit", exit: "shipped" });
  });

  it("throws a typed RoutingError for unknown paths, undeclared targets and invalid choices", () => {
    const compiled = compileWorkflow(release);
    expect(() => compiled.next("inspect", {})).toThrow(RoutingError);
    expect(() => compiled.next("review", "maybe")).toThrowError(
      expect.objectContaining({ code: "invalid_choice", path: "review" }),
    );
  });

  it("projects scope inputs from the run input and the parent's outputs", () => {
    const compiled = compileWorkflow(release);
    const outputs = new Map<string, unknown>([["review", "ship"]]);
    expect(compiled.scopeInput("", { repo: "/src/app" }, outputs)).toEqual({ repo: "/src/app" });
    expect(compiled.scopeInput("workspace", { repo: "/src/app" }, outputs)).toEqual({ dir: "/src/app" });
    expect(compiled.scopeInput("documentation", { repo: "/src/app" }, outputs)).toEqual({ topic: "api" });
    expect(compiled.scopeInput("documentation/workspace", { repo: "/src/app" }, outputs)).toEqual({
      dir: "docs/api",
    });
    expect(compiled.scopeOutputs("", outputs)).toEqual({ review: "ship" });
    expect(compiled.scopeOutputs("documentation", outputs)).toEqual({});
    expect(() => compiled.scopeInput("", { repo: 1 }, outputs)).toThrow(ScopeInputError);
    expect(() => compiled.scopeInput("nowhere", {}, outputs)).toThrow(ScopeInputError);
  });

  it("emits a JSON manifest with paths, kinds, mounts and resolved edges", () => {
    const { manifest } = compileWorkflow(release);
    expect(graphManifestSchema.parse(JSON.parse(JSON.stringify(manifest)))).toEqual(manifest);
    expect(manifest.mounts.map((m) => [m.path, m.workflow, m.startPath])).toEqual([
      ["workspace", "workspace", "workspace/inspect"],
      ["documentation", "documentation", "documentation/workspace/inspect"],
      ["documentation/workspace", "workspace", "documentation/workspace/inspect"],
    ]);
    expect(manifest.edges).toContainEqual({
      from: "documentation/workspace/inspect",
      to: { kind: "node", path: "review" },
      via: ["documentation/workspace.broken", "documentation.written"],
    });
    expect(manifest.edges).toContainEqual({
      from: "review",
      to: { kind: "exit", exit: "failed" },
      label: "stop",
    });
  });
});

describe("compiled nodes", () => {
  it("normalizes static texts and commands into functions of the context", () => {
    const compiled = compileWorkflow(
      defineWorkflow({
        name: "nodes",
        startAt: "ask",
        nodes: {
          ask: agent({ prompt: "Plan it", output: z.string(), timeoutMs: 1000, statusDetail: "planning" }),
          argv: shell({ exec: ["git", "status"], cwd: "/tmp", env: { A: "1" } }),
          sh: shell({ exec: { shell: "ls | wc -l" }, parse: ({ stdout }) => Number(stdout) }),
          dyn: shell({ exec: ({ input }) => (input ? ["echo", "yes"] : []) }),
          tell: notify({ message: ({ outputs }) => `done: ${String(outputs.sh)}` }),
          confirm: checkpoint({ prompt: "Ship?", answer: z.boolean() }),
        },
        edges: {
          ask: { to: "argv" },
          argv: { to: "sh" },
          sh: { to: ["dyn", "done"], route: () => "elsewhere" as "done" },
          dyn: { to: "tell" },
          tell: { to: "confirm" },
          confirm: { to: "done" },
        },
      }),
    );
    const ctx = {
      input: undefined,
      outputs: { sh: 3 },
      failures: {},
      node: { path: "x", name: "x", visit: 1 },
      signal: new AbortController().signal,
      progress: () => {},
    };
    const ask = compiled.nodes.get("ask");
    if (ask?.kind !== "agent") throw new Error("expected an agent");
    expect([ask.prompt(ctx), ask.statusDetail?.(ctx), ask.timeout]).toEqual([
      "Plan it",
      "planning",
      { kind: "fixed", ms: 1000 },
    ]);
    const argv = compiled.nodes.get("argv");
    if (argv?.kind !== "shell") throw new Error("expected a shell node");
    expect(argv.command(ctx)).toEqual({ argv: ["git", "status"] });
    expect([argv.cwd, argv.env]).toEqual(["/tmp", { A: "1" }]);
    const sh = compiled.nodes.get("sh");
    if (sh?.kind !== "shell") throw new Error("expected a shell node");
    expect(sh.command(ctx)).toEqual({ shell: "ls | wc -l" });
    expect(sh.parse?.({ exitCode: 0, stdout: "3", stderr: "" }, ctx)).toBe(3);
    expect(sh.okExitCodes).toEqual([0]);
    const dyn = compiled.nodes.get("dyn");
    if (dyn?.kind !== "shell") throw new Error("expected a shell node");
    expect(dyn.command({ ...ctx, input: true })).toEqual({ argv: ["echo", "yes"] });
    expect(() => dyn.command(ctx)).toThrow(TypeError);
    const tell = compiled.nodes.get("tell");
    if (tell?.kind !== "notify") throw new Error("expected a notify node");
    expect(tell.message(ctx)).toBe("done: 3");
    expect(compiled.nodes.get("confirm")).toMatchObject({
      kind: "checkpoint",
      path: "confirm",
      title: "confirm",
    });
    expect(() => compiled.next("sh", 3)).toThrowError(
      expect.objectContaining({ name: "RoutingError", code: "undeclared_target", path: "sh" }),
    );
  });
});
