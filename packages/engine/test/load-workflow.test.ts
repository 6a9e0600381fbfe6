import { createHash } from "node:crypto";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SAFE_MESSAGE_MAX_BYTES } from "@piw/protocol";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import {
  compute,
  defineWorkflow,
  loadWorkflowFile,
  builtinRevision,
  registerBuiltinWorkflow,
  resolveWorkflow,
  WorkflowLoadError,
} from "../src/index.js";

let root: string;

beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), "piw-engine-load-"));
});

afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

async function write(path: string, text: string): Promise<string> {
  const file = join(root, path);
  await mkdir(join(file, ".."), { recursive: true });
  await writeFile(file, text);
  return file;
}

/** A workflow file as a user writes it: the API from "piw", schemas from "zod", nothing installed. */
function workflowSource(name: string, marker: string): string {
  return `import { defineWorkflow, compute, shell } from "piw";
import { z } from "zod";
import { greeting } from "./lib/greeting.ts";

export default defineWorkflow({
  name: ${JSON.stringify(name)},
  title: ${JSON.stringify(marker)},
  input: z.object({ task: z.string(), tries: z.number().default(2) }),
  startAt: "plan",
  nodes: {
    plan: compute({ run: ({ input }) => greeting(input.task) }),
    test: shell({ exec: ["npm", "test"] }),
  },
  edges: { plan: { to: "test" }, test: { to: "done" } },
});
`;
}

async function loadError(promise: Promise<unknown>): Promise<WorkflowLoadError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(WorkflowLoadError);
  const loadFailure = error as WorkflowLoadError;
  expect(Buffer.byteLength(loadFailure.message)).toBeLessThanOrEqual(SAFE_MESSAGE_MAX_BYTES);
  expect(loadFailure.message).not.toMatch(/\n|\s+at\s+\S+\s+\(/);
  return loadFailure;
}

describe("loadWorkflowFile", () => {
  it("loads a workflow file from a folder outside the repo, with piw and zod resolved by the engine", async () => {
    await write("lib/greeting.ts", `export const greeting = (task: string): string => \`hello \${task}\`;\n`);
    const source = workflowSource("outside", "Outside the repo");
    const file = await write("outside.workflow.ts", source);
    const loaded = await loadWorkflowFile(file);
    expect(loaded.name).toBe("outside");
    expect(loaded.source).toEqual({
      kind: "file",
      path: file,
      sha256: createHash("sha256").update(source).digest("hex"),
    });
    const { workflow } = loaded;
    expect(workflow.title).toBe("Outside the repo");
    expect([...workflow.nodes.keys()]).toEqual(["plan", "test"]);
    // The file's schemas are the engine's zod: JSON Schema and defaults work on them directly.
    expect(workflow.inputSchema).toBeInstanceOf(z.ZodType);
    expect(workflow.scopeInput("", { task: "x" }, new Map())).toEqual({ task: "x", tries: 2 });
    const plan = workflow.nodes.get("plan");
    if (plan?.kind !== "compute") throw new Error("expected a compute node");
    const ctx = {
      input: { task: "x" },
      outputs: {},
      failures: {},
      node: { path: "plan", name: "plan", visit: 1 },
      signal: AbortSignal.abort(),
      progress: () => {},
    };
    expect(plan.run(ctx)).toBe("hello x");
  });

  it("loads a workflow that imports and includes another workflow file", async () => {
    await write(
      "design.workflow.ts",
      `import { defineWorkflow, agent } from "piw";
import { z } from "zod";
export default defineWorkflow({
  name: "design",
  input: z.object({ topic: z.string() }),
  startAt: "draft",
  exits: ["ready"],
  nodes: { draft: agent({ prompt: "Draft", output: z.object({ ok: z.boolean() }) }) },
  edges: { draft: { to: "ready" } },
});
`,
    );
    const file = await write(
      "build.workflow.ts",
      `import { defineWorkflow, includeWorkflow, notify } from "piw";
import design from "./design.workflow.ts";
export default defineWorkflow({
  name: "build",
  startAt: "design",
  nodes: { tell: notify({ message: "designed" }) },
  includes: { design: includeWorkflow(design, { input: { topic: "cli" } }) },
  edges: { "design.ready": { to: "tell" }, tell: { to: "done" } },
});
`,
    );
    const { workflow } = await loadWorkflowFile(file);
    expect([...workflow.nodes.keys()]).toEqual(["tell", "design/draft"]);
    expect(workflow.next("design/draft", { ok: true })).toEqual({ kind: "node", path: "tell" });
  });

  it("reloads a changed file instead of reusing a cached module", async () => {
    await write("lib/greeting.ts", "export const greeting = (task: string) => task;\n");
    const file = await write("again.workflow.ts", workflowSource("again", "first"));
    const first = await loadWorkflowFile(file);
    await write("again.workflow.ts", workflowSource("again", "second"));
    const second = await loadWorkflowFile(file);
    expect([first.workflow.title, second.workflow.title]).toEqual(["first", "second"]);
    expect(second.source).not.toEqual(first.source);
  });

  it("reports a missing file as workflow_not_found", async () => {
    const error = await loadError(loadWorkflowFile(join(root, "absent.workflow.ts")));
    expect(error.code).toBe("workflow_not_found");
    expect(error.toSafeError()).toEqual({ code: "workflow_not_found", message: error.message });
  });

  it("reports broken files as workflow_invalid with a bounded message and no stack", async () => {
    const cases: [string, string, RegExp][] = [
      [
        "syntax.workflow.ts",
        "export default defineWorkflow({ name: ",
        /failed to load: .*syntax\.workflow\.ts:1:\d+$/,
      ],
      [
        "throws.workflow.ts",
        `throw new Error("boom\\n    at secret (x.ts:1:1)");\n`,
        /failed to load: boom$/,
      ],
      [
        "nodefault.workflow.ts",
        `import { defineWorkflow } from "piw";\nexport const x = 1;\n`,
        /export default defineWorkflow/,
      ],
      ["status.workflow.ts", "export default {};\n", /"status" is reserved/],
      ["plain.ts", "export default {};\n", /workflow files are named <name>\.workflow\.ts/],
      [
        "renamed.workflow.ts",
        `import { defineWorkflow, compute } from "piw";
export default defineWorkflow({ name: "other", startAt: "a", nodes: { a: compute({ run: () => 1 }) }, edges: { a: { to: "done" } } });\n`,
        /defines the workflow "other"; its name must match the file name "renamed"/,
      ],
      ["huge.workflow.ts", `throw new Error("${"x".repeat(5000)}");\n`, /…$/],
    ];
    for (const [name, text, message] of cases) {
      const error = await loadError(loadWorkflowFile(await write(name, text)));
      expect([name, error.code]).toEqual([name, "workflow_invalid"]);
      expect(error.message).toMatch(message);
    }
  });

  it("carries the compiler's problems when the file does not compile", async () => {
    const file = await write(
      "broken.workflow.ts",
      `import { defineWorkflow, compute } from "piw";
export default defineWorkflow({ name: "broken", startAt: "a", nodes: { a: compute({ run: () => 1 }) }, edges: { a: { to: "nowhere" } } } as never);\n`,
    );
    const error = await loadError(loadWorkflowFile(file));
    expect(error.code).toBe("workflow_invalid");
    expect(error.problems).toEqual([
      { path: "a", message: expect.stringContaining('unknown edge target "nowhere"') },
    ]);
  });
});

describe("resolveWorkflow", () => {
  const builtin = defineWorkflow({
    name: "shared",
    title: "built-in",
    startAt: "a",
    nodes: { a: compute({ run: () => 1 }) },
    edges: { a: { to: "done" } },
  });

  it("searches the project, then the home folder, then the built-ins", async () => {
    const cwd = join(root, "project");
    const homeDir = join(root, "home");
    await write("project/.pi/workflows/lib/greeting.ts", "export const greeting = (t: string) => t;\n");
    await write("home/.pi/agent/workflows/lib/greeting.ts", "export const greeting = (t: string) => t;\n");
    const projectFile = await write(
      "project/.pi/workflows/shared.workflow.ts",
      workflowSource("shared", "project"),
    );
    const homeFile = await write(
      "home/.pi/agent/workflows/shared.workflow.ts",
      workflowSource("shared", "home"),
    );
    const unregister = registerBuiltinWorkflow(builtin);
    try {
      const titles: (string | undefined)[] = [];
      titles.push((await resolveWorkflow("shared", { cwd, homeDir })).workflow.title);
      await rm(projectFile);
      titles.push((await resolveWorkflow("shared", { cwd, homeDir })).workflow.title);
      await rm(homeFile);
      const fromBuiltins = await resolveWorkflow("shared", { cwd, homeDir });
      titles.push(fromBuiltins.workflow.title);
      expect(titles).toEqual(["project", "home", "built-in"]);
      expect(fromBuiltins.source).toEqual({
        kind: "builtin",
        id: "shared",
        revision: builtinRevision(builtin),
      });
    } finally {
      unregister();
    }
    const error = await loadError(resolveWorkflow("shared", { cwd, homeDir }));
    expect(error.code).toBe("workflow_not_found");
    expect(error.message).toContain(join(cwd, ".pi", "workflows"));
  });

  it("loads a path argument directly, relative to cwd", async () => {
    await write("elsewhere/lib/greeting.ts", "export const greeting = (t: string) => t;\n");
    await write("elsewhere/direct.workflow.ts", workflowSource("direct", "direct"));
    const byRelativePath = await resolveWorkflow("elsewhere/direct.workflow.ts", {
      cwd: root,
      homeDir: root,
    });
    expect(byRelativePath.source).toMatchObject({
      kind: "file",
      path: join(root, "elsewhere/direct.workflow.ts"),
    });
    const byName = await loadError(resolveWorkflow("direct", { cwd: root, homeDir: root }));
    expect(byName.code).toBe("workflow_not_found");
  });

  it("refuses reserved and malformed names", async () => {
    for (const name of ["answer", "cancel", "list", "pause", "resume", "status", "submit", "-x", "a b"]) {
      const error = await loadError(resolveWorkflow(name, { cwd: root, homeDir: root }));
      expect([name, error.code]).toEqual([name, "workflow_invalid"]);
    }
    expect(() => registerBuiltinWorkflow({ ...builtin, name: "list" })).toThrow(/reserved/);
  });
});
