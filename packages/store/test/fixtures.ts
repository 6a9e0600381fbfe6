import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  type EndedRunRecord,
  type Fence,
  isEndedRun,
  type ReservePreparedRun,
  runOutcome,
  type Transition,
} from "@piw/protocol";
import { expect } from "vitest";
import type { z } from "zod";
import type { RunStore, StoreErrorCode } from "../src/index.js";
import { openTunedStore, type TunedStoreOptions } from "../src/testing.js";

/** A real state directory in a temp folder, and a clock the test moves by hand. */
export interface StoreHarness {
  dir: string;
  store: RunStore;
  clock: { now: number };
  reopen(options?: Partial<TunedStoreOptions>): RunStore;
  cleanup(): void;
}

export function openHarness(options: Partial<TunedStoreOptions> = {}): StoreHarness {
  const dir = mkdtempSync(join(tmpdir(), "piw-store-"));
  const clock = { now: 1_700_000_000_000 };
  const stateDir = join(dir, "state");
  const open = (extra: Partial<TunedStoreOptions> = {}) =>
    openTunedStore({ stateDir, now: () => clock.now, ...options, ...extra });
  const harness: StoreHarness = {
    dir: stateDir,
    store: open(),
    clock,
    reopen(extra) {
      harness.store.close();
      harness.store = open(extra);
      return harness.store;
    },
    cleanup() {
      harness.store.close();
      rmSync(dir, { recursive: true, force: true, maxRetries: 20, retryDelay: 100 });
    },
  };
  return harness;
}

export function preparedRun(runId: string, overrides: Partial<ReservePreparedRun> = {}): ReservePreparedRun {
  return {
    runId,
    workflowName: "demo",
    source: { kind: "file", path: "/tmp/demo.workflow.ts", sha256: "a".repeat(64) },
    definitionDigest: "digest-1",
    manifest: { nodes: ["a", "b"] },
    input: { task: "say hi" },
    origin: { kind: "pi", sessionId: "session-1" },
    ...overrides,
  };
}

/** The value of an applied or adopted transition; anything else fails the test with its evidence. */
export function saved<T>(t: Transition<T>): T {
  if (t.kind === "applied" || t.kind === "adopted") return t.value;
  throw new Error(`expected a saved transition, got ${JSON.stringify(t)}`);
}

/** Reserve, claim and mark a run running; returns the worker's fence. */
export function runningRun(
  store: RunStore,
  runId: string,
  overrides: Partial<ReservePreparedRun> = {},
): Fence {
  saved(store.reservePreparedRun(preparedRun(runId, overrides)));
  const claim = saved(store.claimRun({ runId, claimToken: `claim-${runId}`, leaseMs: 30_000 }));
  const fence = { runId, generation: claim.command.generation, claimToken: claim.command.claimToken };
  saved(store.markRunning(fence));
  return fence;
}

type Conflict = import("@piw/protocol").Conflict;
type RunCommand = import("@piw/protocol").RunCommand;
type RunRecord = import("@piw/protocol").RunRecord;
type StoreError = import("../src/index.js").StoreError;

/** The record of a run that must have ended, with its terminal facts. */
export function endedRun(run: RunRecord | null): EndedRunRecord {
  if (run === null || !isEndedRun(run))
    throw new Error(`expected an ended run, got ${run?.status ?? "none"}`);
  return run;
}

interface FlatRun {
  status: RunRecord["status"];
  claimed: boolean;
  leaseExpiresAt: number | null;
  recoveryReason: import("@piw/protocol").RecoveryReason | null;
  outcome: import("@piw/protocol").TerminalOutcome | null;
  errorCode: string | null;
  terminalFingerprint: string | null;
  presentationState: EndedRunRecord["presentationState"];
  finishedAt: number | null;
}

/**
 * The record with every phase field spelled out, a field its status does not have being null (or
 * `none`): the flat shape the tests and the property model state the status-table rule in.
 */
export function flatRun(run: RunRecord): FlatRun;
export function flatRun(run: RunRecord | null): FlatRun | null;
export function flatRun(run: RunRecord | null): FlatRun | null {
  if (run === null) return null;
  const ended = isEndedRun(run) ? run : null;
  return {
    ...run,
    claimed: run.status === "starting" || run.status === "running",
    leaseExpiresAt: run.status === "starting" ? run.leaseExpiresAt : null,
    recoveryReason: run.status === "parked" ? run.recoveryReason : null,
    outcome: runOutcome(run),
    errorCode: run.status === "failed" ? run.errorCode : run.status === "cancelled" ? "cancelled" : null,
    terminalFingerprint: ended?.terminalFingerprint ?? null,
    presentationState: ended?.presentationState ?? "none",
    finishedAt: ended?.finishedAt ?? null,
  };
}

/** Everything a refused operation must leave untouched: the whole run record and its trace length. */
export interface RunSnapshot {
  run: RunRecord | null;
  events: number;
}

export function snapshot(store: RunStore, runId: string): RunSnapshot {
  return { run: store.getRun(runId), events: store.listRunEvents(runId).length };
}

/** Run `op` and fail unless every listed run is exactly as it was before; returns the op's result. */
export function unchanged<T>(store: RunStore, runIds: string[], op: () => T): T {
  const before = JSON.stringify(runIds.map((id) => snapshot(store, id)));
  const result = op();
  const after = JSON.stringify(runIds.map((id) => snapshot(store, id)));
  if (before !== after)
    throw new Error(`expected no change, but state moved:\nbefore ${before}\nafter  ${after}`);
  return result;
}

/** The evidence of a conflict; anything else fails the test with what came back. */
export function refused<T>(t: Transition<T>): Conflict {
  if (t.kind === "conflict") return t.evidence;
  throw new Error(`expected a conflict, got ${JSON.stringify(t)}`);
}

/** A conflict that must leave every listed run exactly as it was. */
export function refusedWithoutChange<T>(
  store: RunStore,
  runIds: string[],
  op: () => Transition<T>,
): Conflict {
  return refused(unchanged(store, runIds, op));
}

/** The StoreError `op` throws; fails when it returns normally or throws anything else. */
export function thrownStoreError(op: () => unknown): StoreError {
  let result: unknown;
  try {
    result = op();
  } catch (error) {
    if (error instanceof Error && error.name === "StoreError") return error as StoreError;
    throw error;
  }
  throw new Error(`expected a StoreError, got ${JSON.stringify(result)}`);
}

/** Reserve and claim a run (it is then `starting`); returns the command and the worker's fence. */
export function startingRun(
  store: RunStore,
  runId: string,
  overrides: Partial<ReservePreparedRun> = {},
  claimToken = `claim-${runId}`,
): { command: RunCommand; revision: number; fence: Fence } {
  saved(store.reservePreparedRun(preparedRun(runId, overrides)));
  const claim = saved(store.claimRun({ runId, claimToken, leaseMs: 30_000 }));
  return {
    ...claim,
    fence: { runId, generation: claim.command.generation, claimToken: claim.command.claimToken },
  };
}

/** What a refused operation must leave untouched: the run's revisions, status and event count. */
export interface RunCounters {
  revision: number;
  progressRevision: number;
  status: string;
  events: number;
}

export function runSnapshot(store: RunStore, runId: string): RunCounters {
  const run = store.getRun(runId);
  if (!run) throw new Error(`no run ${runId}`);
  return {
    revision: run.revision,
    progressRevision: run.progressRevision,
    status: run.status,
    events: store.listRunEvents(runId).length,
  };
}

/** Call `fn`, expect a StoreError with `code`, and return it. */
export function expectStoreError(fn: () => unknown, code: StoreErrorCode): StoreError {
  const error = thrownStoreError(fn);
  expect(error.code).toBe(code);
  return error;
}

/** Claim a queued or parked run with `claimToken` and mark it running; returns the new fence. */
export function claimRunning(store: RunStore, runId: string, claimToken: string): Fence {
  const claim = saved(store.claimRun({ runId, claimToken, leaseMs: 30_000 }));
  const fence = { runId, generation: claim.command.generation, claimToken: claim.command.claimToken };
  saved(store.markRunning(fence));
  return fence;
}

/** The worker holding `fence` died after saving progress: park the run and relaunch it. */
export function crashAndRelaunch(store: RunStore, fence: Fence, claimToken: string): Fence {
  saved(
    store.parkRun(fence, {
      code: "worker_lost",
      message: "The worker stopped after saving progress; relaunching.",
      launchId: `launch-${claimToken}`,
    }),
  );
  return claimRunning(store, fence.runId, claimToken);
}

/** The engine's effect identity: the full compiled node path, the visit, the effect type and its ordinal. */
export function effectIdFor(runId: string, path: string, visit: number, type: string, ordinal = 0): string {
  return `${runId}:${path}:${visit}:${type}:${ordinal}`;
}

/**
 * A malformed request never reaches the store: the host's RPC layer parses every request with its
 * protocol schema and answers `invalid_params`. What such a test checks is that the schema refuses it.
 */
export function expectRefusedBySchema(schema: z.ZodType, value: unknown): void {
  expect(schema.safeParse(value).success).toBe(false);
}
