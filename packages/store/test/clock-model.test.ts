import { type ClockReason, type Fence, WAKE_LEAD_MS } from "@piw/protocol";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { RunStore } from "../src/index.js";
import { openHarness, runningRun, saved } from "./fixtures.js";

// A seeded model test of the clock's transitions on a real store: random sequences of clock parks
// (wait and retry), time passing, the clock's wake, pause, explicit resume, cancel and a host restart
// (the store reopened). After every step the store's due set and next wake-up time equal the model's,
// and a wake is applied exactly when the model says the run is due within the wake lead.

type Phase = "running" | "parked" | "cancelled";
interface ModelRun {
  phase: Phase;
  wakeAt: number | null;
  paused: boolean;
  /** Retries scheduled for visit 1 of `a`: the next one's attempt number is this + 2. */
  retries: number;
}

type Op =
  | { t: "wait"; run: number; inMs: number }
  | { t: "retry"; run: number; inMs: number }
  | { t: "advance"; ms: number }
  | { t: "wake"; run: number }
  | { t: "pause"; run: number }
  | { t: "resume"; run: number }
  | { t: "cancel"; run: number }
  | { t: "restart" };

const RUNS = 3;
const run = fc.nat({ max: RUNS - 1 });
const opArb: fc.Arbitrary<Op> = fc.oneof(
  fc.record({ t: fc.constant("wait" as const), run, inMs: fc.nat({ max: 5_000 }) }),
  fc.record({ t: fc.constant("retry" as const), run, inMs: fc.nat({ max: 5_000 }) }),
  fc.record({ t: fc.constant("advance" as const), ms: fc.nat({ max: 4_000 }) }),
  fc.record({ t: fc.constant("wake" as const), run }),
  fc.record({ t: fc.constant("pause" as const), run }),
  fc.record({ t: fc.constant("resume" as const), run }),
  fc.record({ t: fc.constant("cancel" as const), run }),
  fc.constant({ t: "restart" as const }),
);

function isDue(m: ModelRun, now: number): boolean {
  return m.phase === "parked" && !m.paused && m.wakeAt !== null && m.wakeAt <= now;
}

/** The clock may claim a run that is due within the wake lead. */
function isClaimable(m: ModelRun, now: number): boolean {
  return isDue(m, now + WAKE_LEAD_MS);
}

describe("the clock's transitions against a model", () => {
  it("keeps the due set, the next wake-up and every wake decision equal to the model", () => {
    fc.assert(
      fc.property(fc.array(opArb, { minLength: 1, maxLength: 40 }), (ops) => {
        const h = openHarness();
        try {
          let store: RunStore = h.store;
          const ids = Array.from({ length: RUNS }, (_, i) => `m-${i}`);
          const fences: Fence[] = [];
          const model: ModelRun[] = ids.map(() => ({
            phase: "running",
            wakeAt: null,
            paused: false,
            retries: 0,
          }));
          let tokens = 0;
          for (const runId of ids) {
            const fence = runningRun(store, runId, { origin: { kind: "cli" } });
            saved(store.startNodeVisit(fence, { path: "a", visit: 1, nodeKind: "action" }));
            fences.push(fence);
          }
          /** Claim for a new worker, as the host would, and reopen the visit. */
          const reopen = (i: number, claim: { command: { generation: number; claimToken: string } }) => {
            const fence = {
              runId: ids[i] as string,
              generation: claim.command.generation,
              claimToken: claim.command.claimToken,
            };
            saved(store.markRunning(fence));
            saved(store.startNodeVisit(fence, { path: "a", visit: 1, nodeKind: "action" }));
            fences[i] = fence;
          };
          for (const op of ops) {
            const now = h.clock.now;
            switch (op.t) {
              case "wait":
              case "retry": {
                const m = model[op.run] as ModelRun;
                const at = now + op.inMs;
                const reason: ClockReason =
                  op.t === "wait"
                    ? { code: "waiting", message: "w", path: "a", visit: 1, until: at }
                    : {
                        code: "retry_waiting",
                        message: "r",
                        path: "a",
                        visit: 1,
                        attempt: m.retries + 2,
                        attempts: 100,
                        at,
                        lastError: "node_failed",
                      };
                const t = store.parkRun(fences[op.run] as Fence, reason);
                if (m.phase === "running") {
                  expect(t.kind).toBe("applied");
                  Object.assign(m, {
                    phase: "parked",
                    wakeAt: at,
                    retries: m.retries + (op.t === "retry" ? 1 : 0),
                  });
                } else expect(t.kind).toBe("conflict");
                break;
              }
              case "advance":
                h.clock.now += op.ms;
                break;
              case "wake": {
                const m = model[op.run] as ModelRun;
                const t = store.claimRun({
                  runId: ids[op.run] as string,
                  claimToken: `t${tokens++}`,
                  leaseMs: 1_000,
                  wake: true,
                });
                expect(t.kind, `wake of ${JSON.stringify(m)} at ${now}`).toBe(
                  isClaimable(m, now) ? "applied" : "conflict",
                );
                if (t.kind === "applied") {
                  reopen(op.run, t.value);
                  Object.assign(m, { phase: "running", wakeAt: null, paused: false });
                }
                break;
              }
              case "pause": {
                const m = model[op.run] as ModelRun;
                const t = store.requestPause({ runId: ids[op.run] as string });
                if (m.phase === "cancelled") expect(t.kind).toBe("conflict");
                else m.paused = true;
                break;
              }
              case "resume": {
                const m = model[op.run] as ModelRun;
                const t = store.claimRun({
                  runId: ids[op.run] as string,
                  claimToken: `t${tokens++}`,
                  leaseMs: 1_000,
                  resume: true,
                });
                expect(t.kind).toBe(m.phase === "parked" ? "applied" : "conflict");
                if (t.kind === "applied") {
                  reopen(op.run, t.value);
                  Object.assign(m, { phase: "running", wakeAt: null, paused: false });
                }
                break;
              }
              case "cancel": {
                const m = model[op.run] as ModelRun;
                const t = store.cancelRun({ runId: ids[op.run] as string });
                expect(t.kind).toBe(m.phase === "cancelled" ? "adopted" : "applied");
                Object.assign(m, { phase: "cancelled", wakeAt: null, paused: false });
                break;
              }
              case "restart":
                store = h.reopen();
                break;
              default:
                op satisfies never;
            }
            const at = h.clock.now;
            const due = ids.filter((_, i) => isDue(model[i] as ModelRun, at)).sort();
            expect([...store.listDueRuns(at)].sort()).toEqual(due);
            const pending = model.filter((m) => m.phase === "parked" && !m.paused && m.wakeAt !== null);
            const next = pending.length === 0 ? null : Math.min(...pending.map((m) => m.wakeAt as number));
            expect(store.nextWakeAt()).toBe(next);
            for (const [i, m] of model.entries()) {
              const saved = store.getRun(ids[i] as string);
              expect(saved?.paused ?? false).toBe(m.phase === "cancelled" ? false : m.paused);
            }
          }
        } finally {
          h.cleanup();
        }
      }),
      { seed: 0x14c10c, numRuns: 40 },
    );
  }, 120_000);
});
