import { describe, expect, it } from "vitest";
import { preflightReplySchema, quickPreparedLaunch } from "../src/index.js";

/**
 * The quick check of a prepared launch (a launch-cache hit of `piw run`) takes only what
 * `preflightReplySchema` takes, and gives it back as the schema does.
 */

const SHA = "a".repeat(64);

function sampleReply(): Record<string, unknown> {
  return {
    type: "launch.prepared",
    requestId: "6f1c2d4e-0b8a-4c1e-9d2f-3a4b5c6d7e8f",
    launch: {
      workflowName: "hello",
      source: { kind: "file", path: "/work/examples/hello.workflow.ts", sha256: SHA },
      definitionDigest: "sha256:abc",
      manifest: {
        version: 1,
        workflow: "hello",
        nodes: [{ path: "greet", kind: "compute" }],
        exits: ["done"],
      },
      input: { task: "world", list: [1, 2.5, null, true, "x"] },
      presentationInstructions: "say it plainly",
      budget: { usd: 1.5, tokens: 1000, agentTurns: 3, wallMs: 60_000 },
      notifyModel: { onFailure: true, onCancel: false },
      title: "Say hello",
      notes: ["the task was ignored"],
      agentSteps: ["plan"],
    },
    sources: [{ path: "/work/examples/hello.workflow.ts", sha256: SHA }],
  };
}

/** A small seeded generator (mulberry32): the same mutations on every run. */
function seeded(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const BAD: unknown[] = [
  undefined,
  null,
  0,
  -1,
  1.5,
  2 ** 53,
  1e13,
  Number.NaN,
  "",
  "x",
  "x".repeat(101),
  "x".repeat(201),
  "x".repeat(4097),
  "A".repeat(64),
  "a".repeat(63),
  "0".repeat(32),
  true,
  {},
  [],
  ["x"],
  { kind: "nope" },
  { kind: "builtin", id: "b", revision: "1" },
  { onFailure: true },
  "launch.prepared",
  "refused",
];

/** Every place in `value` (by its path of keys), with a setter that returns a copy with it replaced. */
function places(value: unknown, replace: (v: unknown) => unknown, out: ((v: unknown) => unknown)[]): void {
  out.push(replace);
  if (Array.isArray(value)) {
    value.forEach((item, i) => {
      places(item, (v) => replace(value.map((x, j) => (j === i ? v : x))), out);
    });
  } else if (typeof value === "object" && value !== null) {
    for (const [key, inner] of Object.entries(value))
      places(inner, (v) => replace({ ...value, [key]: v }), out);
    // A key the quick check does not know.
    out.push((v) => replace({ ...value, added: v }));
  }
}

describe("quickPreparedLaunch", () => {
  it("takes a plain prepared launch and gives exactly what the schema gives", () => {
    const reply = sampleReply();
    const full = preflightReplySchema.parse(reply);
    expect(quickPreparedLaunch(reply)).toEqual(full);
    const { sources: _sources, ...withoutSources } = reply;
    const launch = reply.launch as Record<string, unknown>;
    const { title: _t, budget: _b, presentationInstructions: _p, ...bare } = launch;
    expect(quickPreparedLaunch(withoutSources)).toEqual(preflightReplySchema.parse(withoutSources));
    expect(quickPreparedLaunch({ ...reply, launch: bare })).toEqual(
      preflightReplySchema.parse({ ...reply, launch: bare }),
    );
    const builtin = { ...launch, source: { kind: "builtin", id: "autoplan", revision: "1" } };
    expect(quickPreparedLaunch({ ...reply, launch: builtin })).toBeDefined();
    // Any other reply is the schema's to read.
    expect(quickPreparedLaunch({ type: "crashed", requestId: "r" })).toBeUndefined();
  });

  it("never takes a mutation the schema refuses (seeded)", () => {
    const random = seeded(29);
    const reply = sampleReply();
    const setters: ((v: unknown) => unknown)[] = [];
    places(reply, (v) => v, setters);
    let tried = 0;
    let taken = 0;
    const check = (mutated: unknown) => {
      tried += 1;
      const quick = quickPreparedLaunch(mutated);
      if (quick === undefined) return;
      taken += 1;
      const full = preflightReplySchema.safeParse(mutated);
      expect(full.success, JSON.stringify(mutated).slice(0, 300)).toBe(true);
      expect(quick).toEqual(full.data);
    };
    // Each place, by each bad value; then random pairs of places at once.
    for (const set of setters) for (const bad of BAD) check(set(bad));
    for (let i = 0; i < 5_000; i += 1) {
      const first = setters[Math.floor(random() * setters.length)];
      const value = BAD[Math.floor(random() * BAD.length)];
      if (first === undefined) continue;
      const once = first(value);
      const again: ((v: unknown) => unknown)[] = [];
      places(once, (v) => v, again);
      const second = again[Math.floor(random() * again.length)];
      if (second !== undefined) check(second(BAD[Math.floor(random() * BAD.length)]));
    }
    expect(tried).toBeGreaterThan(5_000);
    // The JSON fields (manifest, input) take anything, so some mutations are taken.
    expect(taken).toBeGreaterThan(50);
    expect(taken).toBeLessThan(tried / 2);
  });
});
