import { describe, expect, it } from "vitest";
import { workerMethods } from "../src/index.js";
import { COMMON_BAD, expectMutationsHeld } from "./mutations.js";

/**
 * The zod-free checks of the replies a worker receives once per node take only what the method's
 * result schema takes, and only values the schema gives back unchanged: the RPC peer hands a reply
 * that passes one to the worker as it is.
 */

const running = (path: string) => ({
  status: "running",
  path,
  visit: 2,
  attempt: 1,
  deadline: { timeoutMs: 30_000, at: 1_764_000_000_000 },
  dueAt: 1_764_000_000_500,
  failedAttempts: 0,
});
const finished = (path: string) => ({
  status: "finished",
  path,
  visit: 1,
  attempt: 3,
  result: { status: "succeeded", output: { items: [1, "two", null, { deep: [true] }] }, next: "loop/check" },
});

const SAMPLES = {
  "visit.start": { kind: "applied", value: running("loop/check") },
  "visit.finish": { kind: "adopted", value: finished("fetch") },
  "visit.advance": {
    kind: "applied",
    value: { finished: finished("fetch"), started: { kind: "adopted", value: running("loop/check") } },
  },
} as const;

const BAD: unknown[] = [
  ...COMMON_BAD,
  1_000_001,
  "a//b",
  { kind: "conflict" },
  "running",
  "finished",
  "failed",
  "applied",
  "recoveryRequired",
];

type Method = keyof typeof SAMPLES;
const METHODS = Object.keys(SAMPLES) as Method[];

function hold(method: Method, value: unknown): boolean {
  const { quickResult, result } = workerMethods[method];
  if (!quickResult(value)) return false;
  const full = result.safeParse(value);
  expect(full.success, `${method}: ${JSON.stringify(value)?.slice(0, 300)}`).toBe(true);
  expect(full.data).toEqual(value);
  return true;
}

describe("the quick checks of a worker's per-node replies", () => {
  it.each(METHODS)(
    "%s: takes a saved visit as the schema gives it, and leaves the rest to the schema",
    (method) => {
      const sample = SAMPLES[method];
      expect(hold(method, sample)).toBe(true);
      expect(hold(method, JSON.parse(JSON.stringify(sample)))).toBe(true);
      // Refusals, conflicts and failed visits are rare: the schema reads them.
      const { quickResult, result } = workerMethods[method];
      const conflict = { kind: "conflict", evidence: { expected: { generation: 1 }, actual: null } };
      expect(quickResult(conflict)).toBe(false);
      const parked = { kind: "recoveryRequired", reason: { code: "paused", message: "Paused by request." } };
      expect(quickResult(parked)).toBe(false);
      expect(result.safeParse(parked).success).toBe(true);
    },
  );

  it("does not take a failed visit, which the schema reads with its error", () => {
    const failed = {
      ...finished("fetch"),
      result: { status: "failed", error: { code: "node_failed", message: "exit 1" }, next: "fix" },
    };
    const reply = { kind: "applied", value: failed };
    expect(workerMethods["visit.finish"].quickResult(reply)).toBe(false);
    expect(workerMethods["visit.finish"].result.safeParse(reply).success).toBe(true);
  });

  it.each(METHODS)("%s: never takes a mutation the schema refuses or would change (seeded)", (method) => {
    // Outputs take any JSON and optional fields may go, so some mutations are taken; most are not.
    expectMutationsHeld(SAMPLES[method], BAD, method.length * 7919, (value) => hold(method, value));
  });
});
