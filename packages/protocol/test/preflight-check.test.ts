import { describe, expect, it } from "vitest";
import { preflightReplySchema, quickPreparedLaunch } from "../src/index.js";
import { COMMON_BAD, eachMutation } from "./mutations.js";

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

const BAD: unknown[] = [
  ...COMMON_BAD,
  1e13,
  Number.NaN,
  "x".repeat(101),
  "x".repeat(201),
  "A".repeat(64),
  "a".repeat(63),
  "0".repeat(32),
  ["x"],
  { kind: "nope" },
  { kind: "builtin", id: "b", revision: "1" },
  { onFailure: true },
  "launch.prepared",
  "refused",
];

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
    eachMutation(sampleReply(), BAD, { seed: 29, pairs: 5_000 }, check);
    expect(tried).toBeGreaterThan(5_000);
    // The JSON fields (manifest, input) take anything, so some mutations are taken.
    expect(taken).toBeGreaterThan(50);
    expect(taken).toBeLessThan(tried / 2);
  });
});
