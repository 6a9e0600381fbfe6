import { chmod, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { enableCompileCache, getCompileCacheDir } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { loadWorkflowFile } from "../src/index.js";

// This test file's process gets a compile cache of its own, as the worker has one in the state folder.
let root: string;
let stripped: string;

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), "piw-engine-stripped-"));
  expect(getCompileCacheDir()).toBeUndefined();
  enableCompileCache(join(root, "compile-cache"));
  stripped = join(getCompileCacheDir() as string, "piw-stripped");
});

afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

function source(title: string): string {
  return `import { compute, defineWorkflow } from "piw";
const title: string = ${JSON.stringify(title)};
export default defineWorkflow({
  name: "cached",
  title,
  startAt: "only",
  nodes: { only: compute({ run: (): number => 1 }) },
  edges: { only: { to: "done" } },
});
`;
}

it("strips a TypeScript workflow once and loads the same bytes again from the stripped copy", async () => {
  const file = join(root, "cached.workflow.ts");
  await writeFile(file, source("first"));
  const first = await loadWorkflowFile(file);
  expect(first.workflow.title).toBe("first");
  const entries = (await readdir(stripped)).filter((name) => name.endsWith(".js"));
  expect(entries).toHaveLength(1);
  const copy = join(stripped, entries[0] as string);
  const text = await readFile(copy, "utf8");
  // Types erased to spaces: the same lines, no annotation left.
  expect(text.split("\n")).toHaveLength(source("first").split("\n").length);
  expect(text).not.toContain(": string");
  expect(text).not.toContain("): number");

  // The same bytes load from the copy, not through the stripper: a marked copy shows it.
  await writeFile(copy, text.replace('"first"', '"from the stripped copy"'));
  const again = await loadWorkflowFile(file);
  expect(again.workflow.title).toBe("from the stripped copy");

  // Changed bytes are stripped afresh, beside the first.
  await writeFile(file, source("second"));
  const changed = await loadWorkflowFile(file);
  expect(changed.workflow.title).toBe("second");
  expect((await readdir(stripped)).filter((name) => name.endsWith(".js"))).toHaveLength(2);
});

it("does not use stripped copies from a folder that others may write to", async () => {
  await mkdir(join(root, "other"));
  const file = join(root, "other", "cached.workflow.ts");
  await writeFile(file, source("own"));
  expect((await loadWorkflowFile(file)).workflow.title).toBe("own");
  const before = new Set(await readdir(stripped));
  const copy = [...before].find((name) => name.endsWith(".js") && !name.startsWith("."));
  expect(copy).toBeDefined();
  for (const name of before) {
    const path = join(stripped, name);
    const text = await readFile(path, "utf8");
    await writeFile(path, text.replace('"own"', '"planted"'));
  }
  await chmod(stripped, 0o777);
  try {
    expect((await loadWorkflowFile(file)).workflow.title).toBe("own");
  } finally {
    await chmod(stripped, 0o700);
  }
  // Back to this user's alone: the (planted) copy is used again, so the check above was the folder's mode.
  expect((await loadWorkflowFile(file)).workflow.title).toBe("planted");
});
