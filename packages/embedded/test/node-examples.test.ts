import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { loadWorkflowFile } from "@piw/engine";
import { afterEach, describe, expect, it } from "vitest";
import { type Harness, openRuntime } from "./harness.js";

/**
 * The examples of the node pages (docs/nodes/<kind>.md): each is a real workflow file, loaded and
 * compiled by the engine's loader and run against the real store, and each page shows its file as it is.
 * The wait example needs the host's clock: apps/piw/test/wait-example.test.ts runs it through the CLI.
 */

const NODES_DOCS = resolve(import.meta.dirname, "../../../docs/nodes");
const EXAMPLES = join(NODES_DOCS, "examples");
const KINDS = [
  "agent",
  "compute",
  "shell",
  "action",
  "notify",
  "checkpoint",
  "decision",
  "include",
  "wait",
  "parallel",
  "map",
];

let h: Harness;
afterEach(() => h?.cleanup());

async function load(kind: string) {
  return loadWorkflowFile(join(EXAMPLES, `${kind}.workflow.ts`));
}

async function runExample(kind: string, task: string) {
  h = openRuntime();
  const loaded = await load(kind);
  return {
    loaded,
    ...(await h.runtime.run({ workflow: loaded.workflow, source: loaded.source, input: { task } })),
  };
}

/** The TypeScript blocks of a page, as written. */
function tsBlocks(page: string): string[] {
  return [...readFileSync(page, "utf8").matchAll(/```ts\n([\s\S]*?)```/g)].map((m) => m[1] ?? "");
}

describe("the node pages and their examples", () => {
  it("every node kind has a page, every example file belongs to one, and each page shows its file as it is", () => {
    const files = readdirSync(EXAMPLES).filter((name) => name.endsWith(".workflow.ts"));
    expect(files.sort()).toEqual(
      // The building blocks (docs/nodes/{approval,workspace}.md) have examples of their own.
      [
        ...KINDS.map((k) => `${k}.workflow.ts`),
        "include-child.workflow.ts",
        "approval.workflow.ts",
        "workspace.workflow.ts",
      ].sort(),
    );
    for (const kind of KINDS) {
      const page = join(NODES_DOCS, `${kind}.md`);
      expect(existsSync(page), page).toBe(true);
      const blocks = tsBlocks(page);
      expect(blocks, `${kind}.md shows examples/${kind}.workflow.ts`).toContain(
        readFileSync(join(EXAMPLES, `${kind}.workflow.ts`), "utf8"),
      );
    }
    expect(tsBlocks(join(NODES_DOCS, "include.md"))).toContain(
      readFileSync(join(EXAMPLES, "include-child.workflow.ts"), "utf8"),
    );
  });

  it("every example loads and compiles, and its nodes are of the page's kind", async () => {
    for (const kind of KINDS) {
      const loaded = await load(kind);
      expect(loaded.name).toBe(kind);
      const kinds = loaded.workflow.manifest.nodes.map((node) => node.kind);
      if (kind === "include")
        expect(loaded.workflow.manifest.nodes.map((n) => n.path)).toContain("first/greet");
      else expect(kinds, kind).toContain(kind);
    }
  });

  it("compute: the words counted", async () => {
    const { outcome } = await runExample("compute", "three small words");
    expect(outcome).toEqual({ kind: "completed", output: { words: 3, longest: "three" } });
  });

  it("shell: argv, a shell line with env, and a cwd of its own", async () => {
    const { outcome } = await runExample("shell", "quiet please");
    expect(outcome).toEqual({ kind: "completed", output: { shout: "QUIET PLEASE", words: 5, where: "/" } });
  });

  it("action: the effect appends its line once and its result is the output", async () => {
    // The example writes to the system's temp folder; here that is a folder of this test's own.
    const previous = process.env.TMPDIR;
    const tmp = mkdtempSync(join(tmpdir(), "piw-action-example-"));
    process.env.TMPDIR = tmp;
    try {
      const { runId, outcome } = await runExample("action", "first line");
      expect(outcome).toEqual({ kind: "completed", output: { appended: "first line" } });
      expect(readFileSync(join(tmp, "piw-action-example.log"), "utf8")).toBe("first line\n");
      expect(h.store.listRunEffects(runId).map((e) => [e.path, e.status])).toEqual([["record", "settled"]]);
    } finally {
      if (previous === undefined) delete process.env.TMPDIR;
      else process.env.TMPDIR = previous;
      rmSync(tmp, { recursive: true, force: true, maxRetries: 20, retryDelay: 100 });
    }
  });

  it("notify: queues its message and goes on", async () => {
    const { runId, outcome } = await runExample("notify", "1.2.3");
    expect(outcome).toEqual({ kind: "completed", output: { version: "1.2.3" } });
    const queued = h.store.listRunEvents(runId).filter((e) => e.type === "message.queued");
    expect(queued).toHaveLength(1);
  });

  it("parallel: three branches joined by name, each visit under its branch's path, routed on the join", async () => {
    const { runId, outcome } = await runExample("parallel", "check these words");
    expect(outcome).toEqual({
      kind: "completed",
      output: { shout: "CHECK THESE WORDS", words: 3, letters: 15 },
    });
    const steps = h.store.listRunSteps(runId).map((s) => `${s.path}:${s.status}`);
    expect(steps.sort()).toEqual(
      [
        "checks:succeeded",
        "checks/shout/shout:succeeded",
        "checks/words/split:succeeded",
        "checks/words/tally:succeeded",
        "checks/letters/letters:succeeded",
        "report:succeeded",
      ].sort(),
    );
    h.cleanup();
    const long = await runExample("parallel", "x".repeat(41));
    expect(long.outcome).toEqual({ kind: "completed", output: "too long to check" });
  });

  it("map: one branch per word, joined in word order, each visit under its item's index", async () => {
    const { runId, outcome } = await runExample("map", "map every word");
    expect(outcome).toEqual({ kind: "completed", output: "every (word 2 of 3)" });
    const steps = h.store.listRunSteps(runId).map((s) => `${s.path}:${s.status}`);
    expect(steps.sort()).toEqual(
      [
        "words:succeeded",
        ...[0, 1, 2].flatMap((i) => [`words/${i}/letters:succeeded`, `words/${i}/describe:succeeded`]),
        "longest:succeeded",
      ].sort(),
    );
    h.cleanup();
    const empty = await runExample("map", "   ");
    expect(empty.outcome).toEqual({ kind: "completed", output: "no words to measure" });
    h.cleanup();
    const many = await runExample("map", "w ".repeat(21));
    expect(many.outcome).toMatchObject({ kind: "failed", error: { code: "map_too_many_items" } });
  });

  it("decision: a short task takes the short edge", async () => {
    const { runId, outcome } = await runExample("decision", "tiny");
    expect(outcome).toEqual({ kind: "completed", output: "a short task" });
    expect(h.store.listRunSteps(runId).map((s) => s.path)).toEqual(["size", "route", "short"]);
  });

  it("include: the child runs under both mounts with their own paths", async () => {
    const { runId, outcome } = await runExample("include", "world");
    expect(outcome).toEqual({ kind: "completed", output: "both mounts greeted, the first one world" });
    expect(h.store.listRunSteps(runId).map((s) => s.path)).toEqual([
      "first/greet",
      "second/greet",
      "summary",
    ]);
  });

  it("checkpoint: waits, and the answer's continuation finishes", async () => {
    const { runId, outcome, loaded } = await runExample("checkpoint", "v2");
    expect(outcome).toEqual({ kind: "waiting", path: "ask", visit: 1 });
    const childId = `${runId}-c1`;
    const prepared = h.store.prepareContinuation({
      answerer: "human",
      runId: childId,
      parentRunId: runId,
      accepted: { path: "ask", visit: 1, answer: { ship: true } },
    });
    expect(prepared.kind).toBe("applied");
    const done = await h.runtime.execute(h.runtime.activate(childId), loaded.workflow);
    expect(done).toEqual({ kind: "completed", output: "shipped v2" });
  });

  it("agent: a submission that fails validate is refused, a good one is the output", async () => {
    h = openRuntime();
    const loaded = await load("agent");
    const runId = h.runtime.reserve({
      workflow: loaded.workflow,
      source: loaded.source,
      input: { task: "The save button does nothing." },
    });
    const activation = h.runtime.activate(runId);
    const running = h.runtime.execute(activation, loaded.workflow);
    const replies: unknown[] = [];
    for (const output of [
      { kind: "bug", reason: "short" },
      { kind: "bug", reason: "Clicking save changes nothing on disk." },
    ]) {
      activation.port.deliverAgentEvent({ type: "submission", output, respond: (r) => replies.push(r) });
    }
    expect(await running).toEqual({
      kind: "completed",
      output: { kind: "bug", reason: "Clicking save changes nothing on disk." },
    });
    expect(JSON.stringify(replies[0])).toContain("give a reason of at least one sentence");
  });
});
