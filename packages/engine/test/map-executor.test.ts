import { describe, expect, it } from "vitest";
import { z } from "zod";
import {
  type ActionContext,
  action,
  compileWorkflow,
  compute,
  defineWorkflow,
  executeRun,
  includeWorkflow,
  MemoryRunPort,
  map,
  parallel,
  type WorkflowDefinition,
} from "../src/index.js";

function started(port: MemoryRunPort): MemoryRunPort {
  port.status = "running";
  return port;
}

function forever(): Promise<never> {
  return new Promise(() => {});
}

async function runUntilIdle(promise: Promise<unknown>): Promise<void> {
  // The hung node never settles: give the executor time to reach it, then abandon it like a dead process.
  await Promise.race([promise, new Promise((resolve) => setTimeout(resolve, 100))]);
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

type Input = { words: unknown };

/** A map `fan` over the input's words between `before` and `after`; `after` returns the joined list. */
function around(fan: ReturnType<typeof map>, extra: Record<string, unknown> = {}): WorkflowDefinition {
  return defineWorkflow({
    name: "around",
    input: z.object({ words: z.unknown() }),
    startAt: "before",
    nodes: {
      before: compute({ run: () => "ready" }),
      fan,
      after: compute({ run: ({ outputs }) => outputs.fan }),
      ...extra,
    },
    edges: { before: { to: "fan" }, fan: { to: "after" }, after: { to: "done" }, ...extra },
  } as never) as WorkflowDefinition;
}

const words = ({ input }: { input: Input }) => input.words as unknown[];

/** A branch of two nodes: its input is the item, and `judge` sees `read`'s output. */
const review = defineWorkflow({
  name: "review",
  input: z.string(),
  startAt: "read",
  nodes: {
    read: action<string>({
      run: async ({ input, mapIndex }) => {
        // Later items finish first, so the output's order comes from the items, not the finish.
        await sleep(40 - 10 * (mapIndex ?? 0));
        return { length: input.length, index: mapIndex };
      },
    }),
    judge: compute({ run: ({ outputs }) => ({ ...(outputs.read as object), verdict: "ok" }) }),
  },
  edges: { read: { to: "judge" }, judge: { to: "done" } },
});

async function run(wf: WorkflowDefinition, input: Input) {
  const port = started(new MemoryRunPort({ input: input as never }));
  const outcome = await executeRun({ workflow: compileWorkflow(wf), port });
  return { port, outcome };
}

describe("map: joins", () => {
  it("runs a two-node workflow branch per item; the output is in item order and each visit has its full path", async () => {
    const { port, outcome } = await run(around(map({ over: words, branch: review })), {
      words: ["a", "bb", "ccc"],
    });
    expect(outcome).toEqual({
      kind: "completed",
      output: [
        { length: 1, index: 0, verdict: "ok" },
        { length: 2, index: 1, verdict: "ok" },
        { length: 3, index: 2, verdict: "ok" },
      ],
    });
    expect(new Set(port.visits.map((v) => `${v.path}#${v.visit}:${v.status}`))).toEqual(
      new Set([
        "before#1:succeeded",
        "fan#1:succeeded",
        ...[0, 1, 2].flatMap((i) => [`fan/${i}/read#1:succeeded`, `fan/${i}/judge#1:succeeded`]),
        "after#1:succeeded",
      ]),
    );
    // The items finished last first, yet the branches started in item order.
    const reads = port.visits.filter((v) => v.path.endsWith("/read")).map((v) => v.path);
    expect(reads).toEqual(["fan/0/read", "fan/1/read", "fan/2/read"]);
  });

  it("names a single node branch after the map node, and feeds an include's projection the item", async () => {
    const single = await run(
      around(map({ over: words, branch: compute<string>({ run: ({ input }) => input.toUpperCase() }) })),
      { words: ["x", "y"] },
    );
    expect(single.outcome).toEqual({ kind: "completed", output: ["X", "Y"] });
    expect(single.port.visits.map((v) => v.path)).toContain("fan/1/fan");

    const child = defineWorkflow({
      name: "child",
      input: z.object({ word: z.string(), at: z.string() }),
      startAt: "say",
      nodes: {
        say: compute<{ word: string; at: string }>({ run: ({ input }) => `${input.at}:${input.word}` }),
      },
      edges: { say: { to: "done" } },
    });
    const projected = await run(
      around(
        map({
          over: words,
          branch: includeWorkflow(child, {
            input: ({ input, outputs }) => ({ word: input as string, at: outputs.before as string }),
          }),
        }),
      ),
      { words: ["p", "q"] },
    );
    expect(projected.outcome).toEqual({ kind: "completed", output: ["ready:p", "ready:q"] });
  });

  it("joins any: the first item wins, the others are cancelled and give null", async () => {
    const branch = action<string>({
      run: async ({ input, signal }) => {
        if (input !== "fast") await new Promise((_, reject) => signal.addEventListener("abort", reject));
        return input;
      },
    });
    const { port, outcome } = await run(around(map({ over: words, branch, join: "any" })), {
      words: ["slow", "fast", "slow"],
    });
    expect(outcome).toEqual({ kind: "completed", output: [null, "fast", null] });
    for (const path of ["fan/0/fan", "fan/2/fan"]) {
      expect(port.visits.find((v) => v.path === path)).toMatchObject({
        status: "failed",
        error: { code: "cancelled" },
      });
    }
  });

  it("joins atLeast k: tolerates failures while k can still succeed, and fails once it cannot", async () => {
    const branch = compute<string>({
      run: ({ input }) => {
        if (input === "bad") throw new Error("bad item");
        return input;
      },
    });
    const fan = (items: string[]) =>
      run(around(map({ over: words, branch, join: { atLeast: 2 }, concurrency: 1 })), { words: items });
    expect((await fan(["a", "bad", "b"])).outcome).toEqual({ kind: "completed", output: ["a", null, "b"] });
    const failed = await fan(["bad", "a", "bad"]);
    expect(failed.outcome).toMatchObject({ kind: "failed", error: { code: "node_failed" } });
    expect(failed.port.visits.find((v) => v.path === "fan")?.error?.message).toMatch(
      /^Branch 0 of fan failed: Compute node fan\/0\/fan threw/,
    );
  });
});

describe("map: lists", () => {
  const echo = compute<unknown>({ run: ({ input }) => input });

  it("succeeds at once with [] on an empty list for join all, and fails for any and atLeast", async () => {
    const all = await run(around(map({ over: words, branch: echo })), { words: [] });
    expect(all.outcome).toEqual({ kind: "completed", output: [] });
    for (const join of ["any", { atLeast: 2 }] as const) {
      const few = await run(around(map({ over: words, branch: echo, join })), {
        words: join === "any" ? [] : [1],
      });
      expect(few.outcome).toMatchObject({ kind: "failed", error: { code: "map_too_few_items" } });
      expect(few.port.visits.filter((v) => v.path.startsWith("fan/"))).toEqual([]);
    }
  });

  it("fails with a typed error that never quotes an item for a bad list, before any branch starts", async () => {
    const secret = "s3cret-item";
    const cases: [unknown, string, number?][] = [
      [{ not: secret }, "map_items_invalid"],
      [secret, "map_items_invalid"],
      [[secret, secret, secret], "map_too_many_items", 2],
      [[secret, () => secret], "map_items_invalid"],
      [[secret, Number.NaN], "map_items_invalid"],
      [[secret, new Date()], "map_items_invalid"],
      [[secret.repeat(300_000)], "map_items_invalid"],
      [Promise.resolve([secret]), "map_items_invalid"],
      [[[secret, undefined]], "map_items_invalid"],
    ];
    for (const [list, code, maxItems] of cases) {
      const fan = map({ over: () => list as unknown[], branch: echo, ...(maxItems ? { maxItems } : {}) });
      const { port, outcome } = await run(around(fan), { words: [] });
      expect(outcome, code).toMatchObject({ kind: "failed", error: { code } });
      expect(JSON.stringify(outcome)).not.toContain(secret);
      expect(port.visits.filter((v) => v.path.startsWith("fan/"))).toEqual([]);
    }
  });

  it("gives the branches the list as JSON saves it, on the first run as after a crash", async () => {
    const seen: unknown[] = [];
    const branch = compute<unknown>({
      run: ({ input }) => {
        seen.push(input);
        return input;
      },
    });
    const list = [{ name: "a", note: undefined }, -0];
    const { outcome } = await run(around(map({ over: () => list, branch, concurrency: 1 })), { words: [] });
    expect(outcome).toEqual({ kind: "completed", output: [{ name: "a" }, 0] });
    expect(seen).toEqual([{ name: "a" }, 0]);
    expect(Object.keys(seen[0] as object)).toEqual(["name"]);
    expect(Object.is(seen[1], -0)).toBe(false);
  });

  it("fails with map_item_invalid when an item does not match the branch's input schema, and routes it", async () => {
    const child = defineWorkflow({
      name: "child",
      input: z.object({ n: z.number() }),
      startAt: "one",
      nodes: { one: compute<{ n: number }>({ run: ({ input }) => input.n }) },
      edges: { one: { to: "done" } },
    });
    const wf = around(map({ over: words, branch: child }), {
      handle: compute({ run: ({ failures }) => failures.fan }),
    }) as WorkflowDefinition & { edges: Record<string, unknown> };
    wf.edges.fan = { to: "after", onFailure: "handle" };
    wf.edges.handle = { to: "done" };
    const { port, outcome } = await run(wf, { words: [{ n: 1 }, { n: "private-value" }] });
    expect(outcome).toMatchObject({ kind: "completed", output: { code: "map_item_invalid" } });
    expect(JSON.stringify(outcome)).not.toContain("private-value");
    expect((outcome as { output: { message: string } }).output.message).toMatch(/^Item 1 of map node fan/);
    expect(port.visits.filter((v) => v.path.startsWith("fan/"))).toEqual([]);
  });
});

describe("map: scheduling", () => {
  function gauged(concurrency?: number) {
    let active = 0;
    let most = 0;
    const branch = action({
      run: async () => {
        active += 1;
        most = Math.max(most, active);
        await sleep(15);
        active -= 1;
        return most;
      },
    });
    const fan = map({ over: () => [1, 2, 3, 4, 5, 6, 7], branch, ...(concurrency ? { concurrency } : {}) });
    return { wf: around(fan), most: () => most };
  }

  it("runs at most `concurrency` branches at once: 4 by default", async () => {
    const capped = gauged(2);
    expect((await run(capped.wf, { words: [] })).outcome.kind).toBe("completed");
    expect(capped.most()).toBe(2);
    const byDefault = gauged();
    expect((await run(byDefault.wf, { words: [] })).outcome.kind).toBe("completed");
    expect(byDefault.most()).toBe(4);
  });

  it("reports on its own visit how many of its items' branches have ended, of how many", async () => {
    const branch = action({ run: () => sleep(300) });
    const { port } = await run(around(map({ over: () => [1, 2, 3], branch, concurrency: 1 })), { words: [] });
    const reports = port.progressReports.filter((r) => r.path === "fan").map((r) => r.state);
    // Rate-limited: the first and the last are always sent, every one of them counts of 3.
    expect(reports[0]).toMatchObject({ done: 0, total: 3 });
    expect(reports.at(-1)).toMatchObject({ done: 3, total: 3 });
    expect(reports.map((r) => r.done)).toEqual([...reports.map((r) => r.done)].sort());
  });

  it("gives a re-visit of the map node (a loop) fresh visits and a fresh list", async () => {
    let round = 0;
    const wf = defineWorkflow({
      name: "loop",
      startAt: "fan",
      nodes: {
        fan: map({
          over: () => {
            round += 1;
            return round === 1 ? ["a"] : ["b", "c"];
          },
          branch: compute<string>({ run: ({ input }) => input }),
        }),
        again: compute({ run: ({ outputs }) => (outputs.fan as string[]).length }),
      },
      edges: {
        fan: { to: "again" },
        again: { to: ["fan", "done"], route: (n: number) => (n === 1 ? "fan" : "done") },
      },
    });
    const { port, outcome } = await run(wf, { words: [] });
    expect(outcome).toEqual({ kind: "completed", output: 2 });
    expect(port.visits.map((v) => `${v.path}#${v.visit}`)).toEqual([
      "fan#1",
      "fan/0/fan#1",
      "again#1",
      "fan#2",
      "fan/0/fan#2",
      "fan/1/fan#1",
      "again#2",
    ]);
  });
});

describe("map: nesting", () => {
  it("runs a map in a map's branch, and a parallel node in a map's branch, each under its item's path", async () => {
    const letters = defineWorkflow({
      name: "letters",
      input: z.string(),
      startAt: "split",
      nodes: {
        split: map({
          over: ({ input }: { input: string }) => input.split(""),
          branch: compute<string>({ run: ({ input, mapIndex }) => `${mapIndex}${input}` }),
        }),
        both: parallel({
          branches: {
            upper: compute<string>({ run: ({ input }) => input.toUpperCase() }),
            size: compute<string>({ run: ({ input }) => input.length }),
          },
          join: "all",
        }),
      },
      edges: { split: { to: "both" }, both: { to: "done" } },
    });
    const { port, outcome } = await run(around(map({ over: words, branch: letters })), {
      words: ["ab", "c"],
    });
    expect(outcome).toEqual({
      kind: "completed",
      output: [
        { upper: "AB", size: 2 },
        { upper: "C", size: 1 },
      ],
    });
    const paths = port.visits.map((v) => v.path);
    expect(paths).toEqual(
      expect.arrayContaining(["fan/0/split/0/split", "fan/0/split/1/split", "fan/1/split/0/split"]),
    );
    expect(paths).toEqual(expect.arrayContaining(["fan/0/both/upper/upper", "fan/1/both/size/size"]));
    expect(port.visits.every((v) => v.status === "succeeded")).toBe(true);
  });
});

describe("map: includes in a branch", () => {
  it("mounts a child workflow in each item's branch, its input projected from the item", async () => {
    const greet = defineWorkflow({
      name: "greet",
      input: z.object({ who: z.string() }),
      startAt: "say",
      exits: ["said"],
      nodes: { say: compute<{ who: string }>({ run: ({ input }) => `hi ${input.who}` }) },
      edges: { say: { to: "said" } },
    });
    const branch = defineWorkflow({
      name: "branch",
      input: z.string(),
      startAt: "hello",
      includes: { hello: includeWorkflow(greet, { input: ({ input }) => ({ who: input as string }) }) },
      nodes: { echo: compute<string>({ run: ({ input }) => `${input}!` }) },
      edges: { "hello.said": { to: "echo" }, echo: { to: "done" } },
    } as never) as WorkflowDefinition;
    const { port, outcome } = await run(around(map({ over: words, branch })), { words: ["ann", "bob"] });
    expect(outcome).toEqual({ kind: "completed", output: ["ann!", "bob!"] });
    expect(port.visits.find((v) => v.path === "fan/0/hello/say")?.output).toBe("hi ann");
    expect(port.visits.find((v) => v.path === "fan/1/hello/say")?.output).toBe("hi bob");
  });
});

describe("map: cancel and pause", () => {
  it("stops every item's branch when the run is cancelled, and starts no queued item", async () => {
    const started_: string[] = [];
    let port: MemoryRunPort | undefined;
    const controller = new AbortController();
    const branch = action<string>({
      run: async ({ input, signal }) => {
        started_.push(input);
        if (started_.length === 2 && port) {
          // As the host's cancel arrives: the store first, then the worker's signal.
          const cancelled = port;
          setImmediate(() => {
            cancelled.status = "cancelled";
            controller.abort();
          });
        }
        await new Promise((_, reject) => signal.addEventListener("abort", () => reject(signal.reason)));
        return input;
      },
    });
    const wf = compileWorkflow(around(map({ over: words, branch, concurrency: 2 })));
    port = started(new MemoryRunPort({ input: { words: ["a", "b", "c"] } }));
    const outcome = await executeRun({ workflow: wf, port, signal: controller.signal });
    expect(outcome.kind).toBe("superseded");
    expect(started_).toEqual(["a", "b"]);
    expect(port.visits.find((v) => v.path === "fan/2/fan")).toBeUndefined();
  });

  it("pauses at the first node boundary an item's branch reaches; the resume runs only what had not finished", async () => {
    const runs: Record<string, number> = {};
    let port: MemoryRunPort | undefined;
    const two = defineWorkflow({
      name: "two-steps",
      startAt: "one",
      nodes: {
        one: compute<string>({
          run: ({ input }) => {
            runs[input] = (runs[input] ?? 0) + 1;
            if (port && input === "a") port.pauseRequested = true;
            return input;
          },
        }),
        two: compute({ run: ({ outputs }) => `${outputs.one}!` }),
      },
      edges: { one: { to: "two" }, two: { to: "done" } },
    });
    const wf = compileWorkflow(around(map({ over: words, branch: two, concurrency: 1 })));
    port = started(new MemoryRunPort({ input: { words: ["a", "b"] } }));
    expect(await executeRun({ workflow: wf, port })).toEqual({ kind: "parked", reason: "paused" });
    expect(port.visits.find((v) => v.path === "fan/0/one")?.status).toBe("succeeded");
    expect(port.visits.find((v) => v.path === "fan/1/one")).toBeUndefined();
    const resumed = started(port.reopen());
    port = undefined;
    expect(await executeRun({ workflow: wf, port: resumed })).toEqual({
      kind: "completed",
      output: ["a!", "b!"],
    });
    expect(runs).toEqual({ a: 1, b: 1 });
  });
});

describe("map: crash recovery", () => {
  it("rebuilds the branches from the saved list, re-runs only unfinished items, and never a settled effect", async () => {
    let list = ["a", "b", "c"];
    let hang = true;
    const performed: string[] = [];
    const calls: Record<string, number> = {};
    const branch = action<string>({
      run: async ({ input, effects }: ActionContext<string>) => {
        calls[input] = (calls[input] ?? 0) + 1;
        await effects.idempotent("note", { input }, () => {
          performed.push(input);
          return input;
        });
        if (input === "b" && hang) return forever();
        return `${input} done`;
      },
    });
    const wf = compileWorkflow(around(map({ over: () => list, branch })));
    const first = started(new MemoryRunPort({ input: { words: [] } }));
    await runUntilIdle(executeRun({ workflow: wf, port: first }));
    expect(first.visits.find((v) => v.path === "fan/1/fan")?.status).toBe("running");

    // `over` would now say something else: the saved list is what the rebuilt branches run over.
    list = ["x"];
    hang = false;
    const second = started(first.reopen());
    expect(await executeRun({ workflow: wf, port: second })).toEqual({
      kind: "completed",
      output: ["a done", "b done", "c done"],
    });
    expect(calls).toEqual({ a: 1, b: 2, c: 1 });
    expect(performed).toEqual(["a", "b", "c"]);
    expect(second.visits.find((v) => v.path === "fan/1/fan")).toMatchObject({ visit: 1, attempt: 2 });
    expect(second.visits.find((v) => v.path === "fan")).toMatchObject({ visit: 1, attempt: 2 });
  });
});
