import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  builtinRevision,
  CompileError,
  compileWorkflow,
  compute,
  defineWorkflow,
  prepareInput,
  registerBuiltinWorkflow,
  resolveWorkflow,
  type WorkflowDefinition,
} from "@piw/engine";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { BUILTIN_WORKFLOWS } from "../src/index.js";

const byName = (name: string): WorkflowDefinition => {
  const found = BUILTIN_WORKFLOWS.find((definition) => definition.name === name);
  if (found === undefined) throw new Error(`no built-in ${name}`);
  return found;
};

let root: string;
const unregister: Array<() => void> = [];
beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), "piw-builtins-"));
  for (const definition of BUILTIN_WORKFLOWS) unregister.push(registerBuiltinWorkflow(definition));
});
afterAll(() => {
  for (const undo of unregister) undo();
  rmSync(root, { recursive: true, force: true });
});

describe("the built-in workflows", () => {
  it("ship under stable names, each compiling with a title, a one-line summary and a field for free words", () => {
    expect(BUILTIN_WORKFLOWS.map((definition) => definition.name)).toEqual([
      "sanity-check",
      "autoplan",
      "autodoc",
      "autoimplement",
    ]);
    for (const definition of BUILTIN_WORKFLOWS) {
      const compiled = compileWorkflow(definition);
      expect(compiled.title, definition.name).toBeTruthy();
      expect(compiled.summary, definition.name).toMatch(/^[^\n]{10,200}$/);
      expect(compiled.inputSchema, definition.name).toBeDefined();
      // The compiler refuses a textInput that names no input field (tested below).
      expect(compiled.textInput, definition.name).toBeTruthy();
    }
  });

  it("resolve by name to the built-in, whose revision is the hash of its definition", async () => {
    const cwd = join(root, "plain");
    mkdirSync(cwd, { recursive: true });
    const loaded = await resolveWorkflow("sanity-check", { cwd, homeDir: cwd });
    expect(loaded.source).toEqual({
      kind: "builtin",
      id: "sanity-check",
      revision: builtinRevision(byName("sanity-check")),
    });
    expect(builtinRevision(byName("sanity-check"))).toMatch(/^[0-9a-f]{16}$/);
  });

  it("are shadowed by a project file of the same name", async () => {
    const cwd = join(root, "shadowed");
    mkdirSync(join(cwd, ".pi", "workflows"), { recursive: true });
    const file = join(cwd, ".pi", "workflows", "sanity-check.workflow.ts");
    writeFileSync(
      file,
      `import { compute, defineWorkflow } from "piw";
export default defineWorkflow({ name: "sanity-check", title: "mine", startAt: "a", nodes: { a: compute({ run: () => 1 }) }, edges: { a: { to: "done" } } });
`,
    );
    const loaded = await resolveWorkflow("sanity-check", { cwd, homeDir: cwd });
    expect(loaded.source).toMatchObject({ kind: "file", path: file });
    expect(loaded.workflow.title).toBe("mine");
  });

  it("map free words to the built-in's main field, and take the whole input as JSON instead", async () => {
    const cwd = join(root, "words");
    mkdirSync(cwd, { recursive: true });
    const loaded = await resolveWorkflow("sanity-check", { cwd, homeDir: cwd });
    expect((await prepareInput(loaded, { task: "  the new retry option " })).input).toEqual({
      focus: "the new retry option",
    });
    expect((await prepareInput(loaded, {})).input).toEqual({});
    const whole = { base: "main", mode: "serial", failOn: ["drop"] };
    expect((await prepareInput(loaded, { task: "ignored words", input: whole })).input).toEqual(whole);
    await expect(prepareInput(loaded, { input: { base: "--output=/tmp/x" } })).rejects.toThrow(
      /does not match/,
    );
  });
});

describe("a built-in's revision", () => {
  const base = defineWorkflow({
    name: "rev",
    summary: "one",
    input: z.object({ words: z.string() }),
    textInput: "words",
    startAt: "a",
    nodes: { a: compute({ run: () => 1 }) },
    edges: { a: { to: "done" } },
  });

  it("is the same for the same definition and changes with any value in it, whatever the code's text", () => {
    const revision = builtinRevision(base);
    expect(builtinRevision({ ...base })).toBe(revision);
    // The same function, written (or transpiled) another way, is the same revision.
    expect(builtinRevision({ ...base, nodes: { a: compute({ run: () => 1 + 0 }) } })).toBe(revision);
    const changedCode = { ...base, nodes: { a: compute({ title: "A", run: () => 2 }) } };
    const changedSummary = { ...base, summary: "two" };
    const changedWords = {
      ...base,
      input: z.object({ words: z.string(), more: z.string() }),
      textInput: "more",
    };
    const revisions = [changedCode, changedSummary, changedWords].map((definition) =>
      builtinRevision(definition),
    );
    expect(new Set([revision, ...revisions]).size).toBe(4);
  });

  it("is refused for a textInput that names no input field", () => {
    const wrong = { ...base, textInput: "nope" } as WorkflowDefinition;
    expect(() => compileWorkflow(wrong)).toThrow(CompileError);
    expect(() => compileWorkflow(wrong)).toThrow(/textInput "nope" is not a field of the input/);
  });
});
