import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import {
  type ActionContext,
  action,
  compileWorkflow,
  defineWorkflow,
  executeRun,
  fileDigest,
  MemoryRunPort,
  textDigest,
  writeTextFile,
} from "../src/index.js";
import { forever, runUntilIdle, started } from "./memory-run.js";

/** Runs until the file holds `text` (the effect ran), then abandons the run like a dead worker. */
async function untilWritten(run: Promise<unknown>, file: string, text: string): Promise<void> {
  const holds = () => {
    try {
      return readFileSync(file, "utf8") === text;
    } catch {
      return false;
    }
  };
  for (let waited = 0; !holds() && waited < 20_000; waited += 20) await runUntilIdle(run, 20);
  // Past the write, the effect's result is saved before the action goes on to hang.
  await runUntilIdle(run, 100);
}

const root = mkdtempSync(join(tmpdir(), "piw-text-files-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** One action that writes `text()` to `file`, then hangs while `hang` is set, like a killed worker. */
function writer(file: string, text: () => string, state: { hang: boolean }) {
  return compileWorkflow(
    defineWorkflow({
      name: "writer",
      startAt: "write",
      nodes: {
        write: action({
          run: async (ctx: ActionContext) => {
            const written = await writeTextFile(ctx.effects, file, text());
            if (state.hang) await forever();
            return written;
          },
        }),
      },
      edges: { write: { to: "done" } },
    }),
  );
}

describe("writeTextFile", () => {
  it("writes the whole text, making parent folders, and reports its path, digest and size", async () => {
    const file = join(root, "new", "deep", "plan.md");
    const wf = writer(file, () => "# Plan\nstep ✓\n", { hang: false });
    const outcome = await executeRun({ workflow: wf, port: started(new MemoryRunPort()) });
    const digest = textDigest("# Plan\nstep ✓\n");
    expect(outcome).toEqual({
      kind: "completed",
      output: { path: file, digest, bytes: Buffer.byteLength("# Plan\nstep ✓\n") },
    });
    expect(readFileSync(file, "utf8")).toBe("# Plan\nstep ✓\n");
    expect(await fileDigest(file)).toBe(digest);
    expect(readdirSync(join(root, "new", "deep"))).toEqual(["plan.md"]);
    expect(await fileDigest(join(root, "nothing-here.md"))).toBeNull();
  });

  it("adopts a file that already holds the text when the effect runs again, without rewriting it", async () => {
    const file = join(root, "adopt.md");
    // As a first attempt leaves it when it died after the rename, before its effect was saved.
    writeFileSync(file, "same\n");
    const before = statSync(file).ino;
    const outcome = await executeRun({
      workflow: writer(file, () => "same\n", { hang: false }),
      port: started(new MemoryRunPort()),
    });
    expect(outcome).toMatchObject({ kind: "completed", output: { digest: textDigest("same\n") } });
    expect(statSync(file).ino).toBe(before);
  });

  it("replaces other text whole; after a crash past the settled effect the retry does not write again", async () => {
    const file = join(root, "replace.md");
    writeFileSync(file, "old\n");
    const state = { hang: true };
    const wf = writer(file, () => "new\n", state);
    const first = started(new MemoryRunPort());
    await untilWritten(executeRun({ workflow: wf, port: first }), file, "new\n");
    expect(first.visits.map((v) => v.status)).toEqual(["running"]);
    // Someone edits the file before the retry: the saved effect is adopted, the edit is kept.
    writeFileSync(file, "edited\n");
    state.hang = false;
    const outcome = await executeRun({ workflow: wf, port: started(first.reopen()) });
    expect(outcome).toMatchObject({ kind: "completed", output: { digest: textDigest("new\n") } });
    expect(readFileSync(file, "utf8")).toBe("edited\n");
  });

  it("is a conflict when the retried visit asks to write other text", async () => {
    const file = join(root, "conflict.md");
    let text = "first\n";
    const state = { hang: true };
    const wf = writer(file, () => text, state);
    const first = started(new MemoryRunPort());
    await untilWritten(executeRun({ workflow: wf, port: first }), file, "first\n");
    text = "second\n";
    state.hang = false;
    const outcome = await executeRun({ workflow: wf, port: started(first.reopen()) });
    expect(outcome.kind).toBe("failed");
    expect(readFileSync(file, "utf8")).toBe("first\n");
  });
});
