import { type AddSchedule, SCHEDULE_MAX_FAILURES, SCHEDULE_ON_TIME_MS } from "@piw/protocol";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { FiringResult } from "../src/index.js";
import { openHarness, saved } from "./fixtures.js";

// A seeded model test of the schedule state machine on a real store: random sequences of time passing,
// due firings (started, failed or skipped), repeated firings of one time, triggers, pauses, resumes and
// host restarts (the store reopened). After every step each schedule's next time, pause state and failure
// count equal the model's, and its runs are exactly the model's: one per fired time, never two.

const EVERY_MS = 10_000;
const WINDOW_MS = 25_000;
const POLICIES = ["latest", "all", "none"] as const;

interface ModelSchedule {
  id: string;
  anchor: number;
  windowMs: number;
  catchUp: (typeof POLICIES)[number];
  nextFor: number;
  paused: boolean;
  pauseReason: "user" | "failures" | null;
  failures: number;
  /** The times a run was made for. */
  runs: Set<number>;
}

type Outcome = "started" | "failed" | "skipped";
type Op =
  | { t: "advance"; ms: number }
  | { t: "fire"; s: number; outcome: Outcome; repeat: boolean }
  | { t: "trigger"; s: number }
  | { t: "pause"; s: number }
  | { t: "resume"; s: number }
  | { t: "restart" };

const s = fc.nat({ max: POLICIES.length - 1 });
const opArb: fc.Arbitrary<Op> = fc.oneof(
  { weight: 3, arbitrary: fc.record({ t: fc.constant("advance" as const), ms: fc.nat({ max: 40_000 }) }) },
  {
    weight: 4,
    arbitrary: fc.record({
      t: fc.constant("fire" as const),
      s,
      outcome: fc.constantFrom<Outcome>("started", "started", "failed", "skipped"),
      repeat: fc.boolean(),
    }),
  },
  { weight: 1, arbitrary: fc.record({ t: fc.constant("trigger" as const), s }) },
  { weight: 1, arbitrary: fc.record({ t: fc.constant("pause" as const), s }) },
  { weight: 1, arbitrary: fc.record({ t: fc.constant("resume" as const), s }) },
  { weight: 1, arbitrary: fc.constant({ t: "restart" as const }) },
);

/** The first schedule time strictly after `after`. */
function timeAfter(m: ModelSchedule, after: number): number {
  return m.anchor + (Math.floor((after - m.anchor) / EVERY_MS) + 1) * EVERY_MS;
}

/** The catch-up rule, written plainly: which time a firing at `now` is for, or null when all were missed. */
function modelChoice(m: ModelSchedule, now: number): number | null {
  const oldest = now - m.windowMs;
  const first = m.nextFor >= oldest ? m.nextFor : timeAfter(m, oldest - 1);
  if (first > now) return null;
  if (m.catchUp === "all") return first;
  return first + Math.floor((now - first) / EVERY_MS) * EVERY_MS;
}

const reserve = (runId: string) => ({
  runId,
  workflowName: "demo",
  source: { kind: "file" as const, path: "/tmp/demo.workflow.ts", sha256: "a".repeat(64) },
  definitionDigest: "digest-1",
  manifest: { nodes: ["a"] },
  input: { task: "tick" },
});

function result(outcome: Outcome, runId: string): FiringResult {
  switch (outcome) {
    case "started":
      return { kind: "started", reserve: reserve(runId) };
    case "failed":
      return { kind: "failed", error: { code: "workflow_not_found", message: "no workflow named demo" } };
    case "skipped":
      return { kind: "skipped" };
    default:
      return outcome satisfies never;
  }
}

describe("the schedule state machine against a model", () => {
  it("keeps next times, pauses, failure counts and runs equal to the model, one run per fired time", () => {
    fc.assert(
      fc.property(fc.array(opArb, { minLength: 1, maxLength: 40 }), (ops) => {
        const h = openHarness();
        try {
          let runCounter = 0;
          const models: ModelSchedule[] = POLICIES.map((catchUp, i) => {
            const add: AddSchedule = {
              scheduleId: `s${i}`,
              workflowRef: "demo",
              workingDir: "/tmp",
              timing: { kind: "every", everyMs: EVERY_MS },
              overlap: "allow",
              catchUp,
              catchUpWindowMs: WINDOW_MS,
              jitterMs: 0,
            };
            saved(h.store.schedules.add(add));
            return {
              id: add.scheduleId,
              anchor: h.clock.now,
              windowMs: catchUp === "none" ? SCHEDULE_ON_TIME_MS : WINDOW_MS,
              catchUp,
              nextFor: h.clock.now + EVERY_MS,
              paused: false,
              pauseReason: null,
              failures: 0,
              runs: new Set(),
            };
          });
          for (const op of ops) {
            const now = h.clock.now;
            const store = h.store;
            switch (op.t) {
              case "advance":
                h.clock.now += op.ms;
                break;
              case "restart":
                h.reopen();
                break;
              case "pause": {
                const m = models[op.s] as ModelSchedule;
                saved(store.schedules.pause(m.id, "by the test"));
                if (!m.paused) Object.assign(m, { paused: true, pauseReason: "user" });
                break;
              }
              case "resume": {
                const m = models[op.s] as ModelSchedule;
                saved(store.schedules.resume(m.id));
                if (m.paused) {
                  Object.assign(m, { paused: false, pauseReason: null, failures: 0 });
                  if (m.nextFor <= now) m.nextFor = timeAfter(m, now);
                }
                break;
              }
              case "trigger": {
                const m = models[op.s] as ModelSchedule;
                runCounter += 1;
                const fired = saved(
                  store.schedules.recordFiring({
                    scheduleId: m.id,
                    scheduledFor: now,
                    source: "manual",
                    result: result("started", `run-${runCounter}`),
                  }),
                );
                expect(fired.run?.origin).toEqual({ kind: "schedule", scheduleId: m.id, scheduledFor: now });
                if (!m.runs.has(now)) m.failures = 0;
                m.runs.add(now);
                break;
              }
              case "fire": {
                const m = models[op.s] as ModelSchedule;
                const plan = saved(store.schedules.planFiring(m.id));
                const due = !m.paused && m.nextFor <= now;
                if (!due) {
                  expect(plan.kind).toBe("not_due");
                  break;
                }
                const choice = modelChoice(m, now);
                if (choice === null) {
                  expect(plan.kind).toBe("missed");
                  m.nextFor = timeAfter(m, now);
                  break;
                }
                expect(plan).toEqual({ kind: "fire", scheduledFor: choice });
                const times = op.repeat ? 2 : 1;
                for (let i = 0; i < times; i += 1) {
                  runCounter += 1;
                  const recorded = store.schedules.recordFiring({
                    scheduleId: m.id,
                    scheduledFor: choice,
                    source: "due",
                    result: result(op.outcome, `run-${runCounter}`),
                  });
                  // The second firing of one time: an adopted run, or refused as no longer due.
                  if (i === 1) {
                    expect(recorded.kind).toBe(op.outcome === "started" ? "adopted" : "conflict");
                  } else expect(recorded.kind).toBe("applied");
                }
                m.nextFor = choice + EVERY_MS;
                if (op.outcome === "started") {
                  m.runs.add(choice);
                  m.failures = 0;
                } else if (op.outcome === "failed") {
                  m.failures += 1;
                  if (m.failures >= SCHEDULE_MAX_FAILURES)
                    Object.assign(m, { paused: true, pauseReason: "failures" });
                }
                break;
              }
              default:
                op satisfies never;
            }
            for (const m of models) {
              const record = h.store.schedules.get(m.id);
              expect(record).not.toBeNull();
              expect({
                nextFor: record?.nextFor,
                paused: record?.paused,
                pauseReason: record?.pauseReason,
                failures: record?.failures,
              }).toEqual({
                nextFor: m.nextFor,
                paused: m.paused,
                pauseReason: m.pauseReason,
                failures: m.failures,
              });
              const runs = h.store.listRuns({ scheduleId: m.id, limit: 10_000 });
              const fired = runs.map((run) =>
                run.origin.kind === "schedule" ? run.origin.scheduledFor : -1,
              );
              expect(new Set(fired).size).toBe(fired.length);
              expect([...fired].sort()).toEqual([...m.runs].sort());
            }
          }
        } finally {
          h.cleanup();
        }
      }),
      { seed: 0x5c4ed, numRuns: 40 },
    );
  });
});
