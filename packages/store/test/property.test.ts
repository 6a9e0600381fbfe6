/**
 * Model-based property test of the RunStore: random operation sequences run against a small
 * reference model and a real store on a temp SQLite file; after every step the store must agree
 * with the model and hold the lifecycle invariants (the status-table rule).
 */
import { accessSync, constants } from "node:fs";
import { isDeepStrictEqual } from "node:util";
import {
  ACTIVE_STATUSES,
  type Conflict,
  type EffectResult,
  enqueueMessageSchema,
  type Fence,
  fenceSchema,
  isAllowedTransition,
  isTerminalStatus,
  type MessageRecord,
  type NodeVisitResult,
  type NodeVisitState,
  type RecoveryReason,
  type RunEnding,
  type RunRecord,
  type RunStatus,
  reservePreparedRunSchema,
  runEndingSchema,
  startNodeVisitSchema,
  type TerminalOutcome,
  type Transition,
  type TurnRecord,
  type WorkerExit,
  type WorkerExitDecision,
} from "@piw/protocol";
import Database from "better-sqlite3";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { z } from "zod";
import { type RunStore, StoreError } from "../src/index.js";
import { flatRun, openHarness, preparedRun, type StoreHarness } from "./fixtures.js";

// ---------------------------------------------------------------------------------------------
// Vocabulary of the generated operations
// ---------------------------------------------------------------------------------------------

const SESSIONS = ["sess-a", "sess-b"] as const;
const RUN_IDS = ["wf-1", "wf-2", "wf-3", "wf-4", "wf-5"] as const;
const PATHS = ["plan", "build/test"] as const;
const CLAIM_TOKENS = ["tok-0", "tok-1", "tok-2"] as const;
const LEASES = [10_000, 30_000] as const;
const ADVANCES = [0, 5_000, 15_000, 31_000] as const;
const LAUNCH_IDS = ["L0", "L1", "L2", "L3"] as const;
const REQUEST_IDS = ["q0", "q1", "q2", "q3"] as const;
const TURN_END_REASONS = ["completed", "aborted", "error"] as const;
const GHOST = "ghost-run";
const PAUSE_AT_BOUNDARY: RecoveryReason = {
  code: "paused",
  message: "Paused at a node boundary by request.",
};

const ENDINGS: RunEnding[] = [
  { outcome: "completed", output: { ok: true } },
  { outcome: "completed", output: { ok: false } },
  {
    outcome: "waiting",
    checkpoint: { path: "plan", visit: 1, prompt: "Approve the plan?" },
    answerCheck: { kind: "worker_only", reason: "not checked in this test" },
  },
  { outcome: "failed", error: { code: "node_failed", message: "The build failed." } },
  { outcome: "timed_out", error: { code: "node_timed_out", message: "The node ran too long." } },
  { outcome: "failed", error: { code: "worker_failed", message: "The worker crashed." } },
];

const PARK_REASONS: RecoveryReason[] = [
  { code: "paused", message: "Paused by the user." },
  PAUSE_AT_BOUNDARY,
  { code: "worker_lost_no_progress", message: "The worker vanished.", launchId: "L0" },
  { code: "manual_effect_unsettled", message: "Check the effect by hand.", effectId: "fx" },
];

// One fixed message per error code, so "same result" means the same whether or not the store
// compares messages.
const VISIT_RESULTS: NodeVisitResult[] = [
  { status: "succeeded", output: { n: 1 }, next: "build/test" },
  { status: "succeeded", output: { n: 2 }, next: null },
  { status: "failed", error: { code: "node_failed", message: "It broke." } },
  { status: "timed_out", error: { code: "node_timed_out", message: "Too slow." } },
];

const EFFECT_RESULTS: EffectResult[] = [
  { ok: true, value: "done" },
  { ok: true, value: "other" },
  { ok: false, error: { code: "node_failed", message: "Refused." } },
];

const EXITS: WorkerExit[] = [
  { kind: "lost", detail: "killed by a signal" },
  { kind: "lost", detail: "channel closed" },
  { kind: "reported", phase: "execute", error: { code: "worker_failed", message: "Crashed." } },
  { kind: "reported", phase: "shutdown" },
];

type FenceChoice = "current" | "stale" | "forged" | "revOk" | "revStale";
type VisitChoice = "next" | "last" | "skip";
type RevChoice = "none" | "ok" | "stale";
/** Which run a command targets: an index into the model's runs (preferring runs in a useful state when `smart`). */
interface Target {
  idx: number;
  ghost: boolean;
  smart: boolean;
  /** Set only on operations derived by `drive`, which already chose the run. */
  runId?: string;
}
interface Fenced {
  run: Target;
  fence: FenceChoice;
  stale: number;
}

type Op =
  | { t: "reserve"; id: number; origin: number; input: number; smart: boolean }
  | { t: "claim"; run: Target; token: number; lease: number; rev: RevChoice }
  | ({ t: "markRunning" } & Fenced)
  | ({ t: "startVisit"; path: number; visit: VisitChoice } & Fenced)
  | ({ t: "finishVisit"; path: number; visit: VisitChoice; result: number } & Fenced)
  | ({ t: "advanceVisit"; path: number; visit: VisitChoice; to: number; output: number } & Fenced)
  | ({ t: "reserveEffect"; path: number; visit: VisitChoice; manual: boolean; request: number } & Fenced)
  | ({ t: "settleEffect"; effect: number; result: number } & Fenced)
  | ({ t: "enqueue"; path: number; visit: VisitChoice; notify: boolean; body: number } & Fenced)
  | { t: "startTurn"; session: number; request: number; message: number; smart: boolean }
  | { t: "endTurn"; session: number; request: number; reason: number; smart: boolean }
  | { t: "pause"; run: Target }
  | ({ t: "park"; reason: number } & Fenced)
  | { t: "cancel"; run: Target; rev: RevChoice }
  | ({ t: "finish"; ending: number } & Fenced)
  | { t: "recover"; run: Target; advance: number }
  | { t: "advance"; advance: number }
  | ({ t: "launch"; launch: number } & Fenced)
  | { t: "exit"; launch: number; exit: number }
  | { t: "restart"; parent: Target; child: number }
  | { t: "continue"; parent: Target; child: number; answer: number; cursorOk: boolean }
  | { t: "invalid"; run: Target; which: number }
  | { t: "drive"; run: Target; variant: number };

// ---------------------------------------------------------------------------------------------
// The reference model
// ---------------------------------------------------------------------------------------------

interface MStep {
  status: "running" | "succeeded" | "failed" | "timed_out";
  attempt: number;
  outputKey: string | null;
  next: string | null;
  code: string | null;
}

interface MRun {
  runId: string;
  session: string | null;
  originCommand: "start" | "continue" | "restart";
  /** What a repeated reservation must match to be adopted (start runs only). */
  reserveKey: string | null;
  parentRunId: string | null;
  restartNumber: number;
  nextCommand: "start" | "resume" | "continue" | "restart";
  status: RunStatus;
  generation: number;
  token: string | null;
  lease: number | null;
  paused: boolean;
  recovery: RecoveryReason | null;
  outcome: TerminalOutcome | null;
  finalKey: string | null;
  errorCode: string | null;
  presentation: "none" | "pending";
  cursor: { path: string; visit: number } | null;
  started: boolean;
  /** A start that ended before it ran a node let go of its input: a restart is refused, a resent start matches any. */
  inputCleared: boolean;
  stepCount: number;
  /** Count of progress writes; a launch remembers the count it started from. */
  progress: number;
  steps: Map<string, MStep>;
  /** Every fence a claim ever handed out, oldest first. */
  fences: Fence[];
  /** The revision last observed (and checked) in the store. */
  revision: number;
  answerKey: string | null;
  restartChild: string | null;
  continueChild: string | null;
}

interface MEffect {
  runId: string;
  manual: boolean;
  request: number;
  status: "reserved" | "settled" | "failed";
  valueKey: string | null;
  code: string | null;
}

interface MMessage {
  runId: string;
  session: string | null;
  kind: "step_prompt" | "notify";
  path: string;
  visit: number;
  body: string;
  status: "pending" | "cancelled";
}

interface MTurn {
  session: string;
  requestId: string;
  messageId: string;
  runId: string | null;
  path: string | null;
  visit: number | null;
  status: "open" | "ended" | "lost" | "unowned";
  reason: string | null;
}

interface MLaunch {
  runId: string;
  generation: number;
  commandType: string;
  progressAt: number;
  decision: WorkerExitDecision | null;
}

class Model {
  runs = new Map<string, MRun>();
  order: string[] = [];
  effects = new Map<string, MEffect>();
  messages = new Map<string, MMessage>();
  turns = new Map<string, MTurn>();
  launches = new Map<string, MLaunch>();
  /** Every status each run was observed in, in order. */
  history = new Map<string, RunStatus[]>();
  log: string[] = [];
  /** The kind of the last store result, for the coverage statistics. */
  lastResult = "";
  /** The operation the last `drive` command chose, for the coverage statistics. */
  derived = "";

  constructor(public now: number) {}

  run(runId: string): MRun | undefined {
    return this.runs.get(runId);
  }

  add(run: MRun): void {
    this.runs.set(run.runId, run);
    this.order.push(run.runId);
  }

  activeIn(session: string): MRun | undefined {
    for (const run of this.runs.values()) {
      if (run.session === session && (ACTIVE_STATUSES as readonly RunStatus[]).includes(run.status))
        return run;
    }
    return undefined;
  }

  /** Step prompts a Pi turn could belong to right now: pending, for an open visit of a running run. */
  ownablePrompts(): string[] {
    return [...this.messages.entries()]
      .filter(([, msg]) => {
        const run = this.runs.get(msg.runId);
        return (
          msg.kind === "step_prompt" &&
          msg.status === "pending" &&
          msg.session !== null &&
          run?.status === "running" &&
          run.steps.get(`${msg.path}#${msg.visit}`)?.status === "running"
        );
      })
      .map(([id]) => id);
  }

  openTurns(): MTurn[] {
    return [...this.turns.values()].filter((turn) => turn.status === "open");
  }

  pick(target: Target, t: Op["t"]): string {
    if (target.runId !== undefined) return target.runId;
    if (target.ghost || this.order.length === 0) return GHOST;
    let pool = this.order;
    if (target.smart) {
      const preferred = this.order.filter((id) => {
        const run = this.runs.get(id);
        return run !== undefined && useful(this, run, t);
      });
      if (preferred.length > 0) pool = preferred;
    }
    return nth(pool, target.idx);
  }

  terminalize(
    run: MRun,
    status: "done" | "failed" | "cancelled",
    outcome: TerminalOutcome,
    finalKey: string | null,
    errorCode: string | null,
    present: boolean,
  ): void {
    this.loseTurns(run.runId);
    // Step prompts go with the run; a notification stays to be delivered (the run's end keeps it).
    for (const msg of this.messages.values())
      if (msg.runId === run.runId && msg.kind === "step_prompt") msg.status = "cancelled";
    run.status = status;
    run.outcome = outcome;
    run.finalKey = finalKey;
    run.errorCode = errorCode;
    run.token = null;
    run.lease = null;
    run.generation += 1;
    run.paused = false;
    run.recovery = null;
    run.presentation = run.session !== null && present ? "pending" : "none";
    if (status !== "done" && run.originCommand === "start" && run.stepCount === 0) run.inputCleared = true;
  }

  park(run: MRun, reason: RecoveryReason): void {
    run.status = "parked";
    run.token = null;
    run.lease = null;
    run.generation += 1;
    run.recovery = reason;
    // A pause asked for while the run ran survives a lost worker: its relaunch parks at the first boundary.
    run.paused = reason.code === "paused" || (reason.code === "worker_lost" && run.paused);
    this.loseTurns(run.runId);
  }

  private loseTurns(runId: string): void {
    for (const turn of this.turns.values())
      if (turn.runId === runId && turn.status === "open") turn.status = "lost";
  }
}

function newRun(
  runId: string,
  session: string | null,
  originCommand: MRun["originCommand"],
  extra: Partial<MRun> = {},
): MRun {
  return {
    runId,
    session,
    originCommand,
    reserveKey: null,
    parentRunId: null,
    restartNumber: 0,
    nextCommand: originCommand,
    status: "queued",
    generation: 0,
    token: null,
    lease: null,
    paused: false,
    recovery: null,
    outcome: null,
    finalKey: null,
    errorCode: null,
    presentation: "none",
    cursor: null,
    started: false,
    inputCleared: false,
    stepCount: 0,
    progress: 0,
    steps: new Map(),
    fences: [],
    revision: 1,
    answerKey: null,
    restartChild: null,
    continueChild: null,
    ...extra,
  };
}

// ---------------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------------

interface Real {
  h: StoreHarness;
  ro: Database.Database;
  statements: Map<string, Database.Statement>;
}

function sql(r: Real, text: string): Database.Statement {
  let statement = r.statements.get(text);
  if (!statement) {
    statement = r.ro.prepare(text);
    r.statements.set(text, statement);
  }
  return statement;
}

function nth<T>(items: readonly T[], index: number): T {
  const item = items[index % items.length];
  if (item === undefined) throw new Error("nth() of an empty list");
  return item;
}

/** JSON with sorted keys, as the store fingerprints values. */
function canon(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) => {
    if (v === null || typeof v !== "object" || Array.isArray(v)) return v;
    return Object.fromEntries(
      Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : 1)),
    );
  });
}

function fail(m: Model, message: string): never {
  throw new Error(`${message}\n--- operations of this run (resolved) ---\n${m.log.join("\n")}`);
}

type Expect =
  | { kind: "applied" | "adopted" | "recoveryRequired" }
  | { kind: "conflict"; evidence: Conflict["kind"] };
const APPLIED: Expect = { kind: "applied" };
const ADOPTED: Expect = { kind: "adopted" };
const RECOVERY: Expect = { kind: "recoveryRequired" };
const refuse = (evidence: Conflict["kind"]): Expect => ({ kind: "conflict", evidence });

/** Call the store; with valid input nothing may throw, not even a StoreError. */
function call<T>(m: Model, label: string, fn: () => Transition<T>): Transition<T> {
  try {
    return fn();
  } catch (error) {
    const what =
      error instanceof StoreError
        ? `StoreError(${error.code}): ${error.message}`
        : `a non-StoreError: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`;
    return fail(m, `${label}: valid input threw ${what}`);
  }
}

function expectKind<T>(m: Model, label: string, t: Transition<T>, exp: Expect): void {
  m.lastResult = t.kind === "conflict" ? `conflict(${t.evidence.kind})` : t.kind;
  const ok =
    t.kind === exp.kind &&
    (exp.kind !== "conflict" || (t.kind === "conflict" && t.evidence.kind === exp.evidence));
  if (!ok) {
    const wanted = exp.kind === "conflict" ? `conflict(${exp.evidence})` : exp.kind;
    fail(m, `${label}: model expected ${wanted}, store returned ${JSON.stringify(t)}`);
  }
}

function same(m: Model, label: string, what: string, actual: unknown, expected: unknown): void {
  if (!isDeepStrictEqual(actual, expected)) {
    fail(
      m,
      `${label}: ${what} differs\n  store: ${JSON.stringify(actual)}\n  model: ${JSON.stringify(expected)}`,
    );
  }
}

/** A returned run record must be exactly what the store now returns for that run. */
function valueIsCurrentRun(m: Model, r: Real, label: string, value: RunRecord): void {
  same(m, label, `returned run ${value.runId} vs getRun`, value, r.h.store.getRun(value.runId));
}

function makeFence(run: MRun | undefined, runId: string, choice: FenceChoice, stale: number): Fence {
  if (!run) return { runId, generation: 1, claimToken: "tok-0" };
  const current: Fence = { runId, generation: run.generation, claimToken: run.token ?? "unclaimed" };
  switch (choice) {
    case "current":
      return current;
    case "revOk":
      return { ...current, expectedRevision: run.revision };
    case "revStale":
      return { ...current, expectedRevision: run.revision - 1 };
    case "forged":
      return { ...current, claimToken: "forged-token" };
    case "stale": {
      const past = run.fences.filter((f) => f.generation !== run.generation);
      return past.length > 0 ? nth(past, stale) : { ...current, generation: run.generation + 1 };
    }
  }
}

function fenceConflict(run: MRun | undefined, fence: Fence): Conflict["kind"] | null {
  if (!run) return "not_found";
  if (run.generation !== fence.generation || run.token !== fence.claimToken) return "stale_fence";
  if (fence.expectedRevision !== undefined && fence.expectedRevision !== run.revision)
    return "revision_mismatch";
  return null;
}

function fenceText(f: Fence): string {
  return `${f.claimToken}@${f.generation}${f.expectedRevision === undefined ? "" : ` rev=${f.expectedRevision}`}`;
}

function resolveVisit(run: MRun | undefined, path: string, choice: VisitChoice): number {
  let max = 0;
  for (const key of run?.steps.keys() ?? []) {
    const [p, v] = key.split("#");
    if (p === path) max = Math.max(max, Number(v));
  }
  if (choice === "next") return max + 1;
  if (choice === "skip") return max + 2;
  return Math.max(1, max);
}

function sameVisitResult(step: MStep, result: NodeVisitResult): boolean {
  if (step.status !== result.status) return false;
  if (result.status === "succeeded")
    return step.outputKey === canon(result.output) && step.next === result.next;
  // A failure that an outcome route took carries its route and report; they are part of the result.
  return (
    step.code === result.error.code &&
    step.next === (result.next ?? null) &&
    step.outputKey === (result.output === undefined ? null : canon(result.output))
  );
}

const RUNNING: readonly RunStatus[] = ["running"];
const LIVE: readonly RunStatus[] = ["queued", "starting", "running", "parked"];

/** The statuses a "smart" target prefers for each operation (a smart command waits until one exists). */
const PREFER: Record<Op["t"], readonly RunStatus[]> = {
  reserve: [],
  claim: ["queued", "parked"],
  markRunning: ["starting"],
  startVisit: RUNNING,
  finishVisit: ["running", "starting"],
  advanceVisit: ["running", "starting"],
  reserveEffect: RUNNING,
  settleEffect: ["running", "starting"],
  enqueue: RUNNING,
  startTurn: [],
  endTurn: [],
  pause: ["running", "starting"],
  park: RUNNING,
  cancel: [],
  finish: ["running", "starting"],
  recover: ["starting"],
  advance: [],
  launch: ["starting", "running"],
  exit: [],
  restart: ["done", "failed", "cancelled"],
  continue: ["done"],
  invalid: [],
  drive: LIVE,
};

/** Whether a smart command of kind `t` has something useful to do with `run`. */
function useful(m: Readonly<Model>, run: MRun, t: Op["t"]): boolean {
  const prefer = PREFER[t];
  if (prefer.length > 0 && !prefer.includes(run.status)) return false;
  const openVisit = [...run.steps.values()].some((step) => step.status === "running");
  switch (t) {
    case "finishVisit":
    case "advanceVisit":
    case "reserveEffect":
    case "enqueue":
      return openVisit;
    case "settleEffect":
      return [...m.effects.values()].some((e) => e.runId === run.runId && e.status === "reserved");
    case "restart":
      return run.restartChild === null;
    case "continue":
      return run.outcome === "waiting" && run.continueChild === null;
    default:
      return true;
  }
}

/** Where a step-level operation acts: a smart one aims at an open visit of its run, if there is one. */
function openVisits(run: MRun | undefined): string[] {
  return [...(run?.steps.entries() ?? [])].filter(([, s]) => s.status === "running").map(([key]) => key);
}

function spot(run: MRun | undefined, smart: boolean, path: number, visit: VisitChoice) {
  const open = openVisits(run);
  if (smart && open.length > 0) {
    const [p = "plan", v = "1"] = nth(open, path).split("#");
    return { path: p, visit: Number(v) };
  }
  const p = nth(PATHS, path);
  return { path: p, visit: resolveVisit(run, p, visit) };
}

interface StepEffect {
  /** Runs whose revision must move (only consulted when the result was applied or recoveryRequired). */
  bumped: string[];
  created: string[];
}
const NOTHING: StepEffect = { bumped: [], created: [] };

/**
 * The natural next operation for a live run, as a host and worker would issue it. `drive` commands
 * take runs deep into their lifecycle; they go through the same predicting handlers as every other op.
 */
function derive(m: Model, op: { run: Target; variant: number }): Op | undefined {
  // Sometimes follow a finished run up, as the host would: continue a waiting run, restart another.
  const parents = m.order.filter((id) => {
    const run = m.run(id);
    return run !== undefined && (useful(m, run, "continue") || useful(m, run, "restart"));
  });
  if (parents.length > 0 && op.variant % 6 === 5) {
    const parentId = nth(parents, op.run.idx);
    const parent: Target = { idx: 0, ghost: false, smart: true, runId: parentId };
    return m.run(parentId)?.outcome === "waiting" && m.run(parentId)?.continueChild === null
      ? { t: "continue", parent, child: 0, answer: op.variant % 2, cursorOk: true }
      : { t: "restart", parent, child: 0 };
  }
  // Sometimes a user resumes a parked run, or restarts a finished one, while its session is busy.
  const blocked = m.order.filter((id) => {
    const run = m.run(id);
    if (run?.session === undefined || run.session === null || !m.activeIn(run.session)) return false;
    return run.status === "parked" || useful(m, run, "restart");
  });
  if (blocked.length > 0 && op.variant % 6 === 4) {
    const runId = nth(blocked, op.run.idx);
    const at: Target = { idx: 0, ghost: false, smart: true, runId };
    return m.run(runId)?.status === "parked"
      ? { t: "claim", run: at, token: op.variant, lease: 1, rev: "none" }
      : { t: "restart", parent: at, child: 0 };
  }
  // Mostly push a running run further; otherwise any live run.
  const live = m.order.filter((id) => LIVE.includes(m.run(id)?.status ?? "done"));
  const running = live.filter((id) => m.run(id)?.status === "running");
  const pool = running.length > 0 && op.run.idx % 3 !== 0 ? running : live;
  const runId = op.run.ghost || pool.length === 0 ? GHOST : nth(pool, Math.floor(op.run.idx / 3));
  const run = m.run(runId);
  if (!run) return undefined;
  const v = op.variant;
  const at: Target = { idx: 0, ghost: false, smart: true, runId };
  const fenced: Fenced = { run: at, fence: "current", stale: 0 };
  switch (run.status) {
    case "queued":
    case "parked":
      return { t: "claim", run: at, token: v, lease: 1, rev: "none" };
    case "starting": {
      // The worker marks the run running or records its launch; or it died silently and the host
      // reconciles after the lease expired; or a resumed worker settles a leftover effect too early.
      const options: Op[] = [
        { t: "markRunning", ...fenced },
        { t: "markRunning", ...fenced },
        { t: "launch", ...fenced, launch: v },
        { t: "recover", run: at, advance: ADVANCES.length - 1 },
      ];
      if ([...m.effects.values()].some((e) => e.runId === runId && e.status === "reserved")) {
        options.push({ t: "settleEffect", ...fenced, effect: 0, result: v });
      }
      if (openVisits(run).length > 0) {
        // A resumed worker re-sends the prompt of its open visit before it marked the run running.
        options.push({ t: "enqueue", ...fenced, path: 0, visit: "last", notify: false, body: 0 });
      }
      return nth(options, v);
    }
    case "running": {
      if (run.paused) {
        // The worker reaches the boundary by starting the next node, alone or in an advance.
        return openVisits(run).length > 0 && v % 2 === 1
          ? { t: "advanceVisit", ...fenced, path: v, visit: "last", to: v, output: v }
          : { t: "startVisit", ...fenced, path: v, visit: "next" };
      }
      const open = openVisits(run);
      if (open.length === 0) {
        // Between visits: open the next one, finish the run, or (a restarted host) record this
        // generation's launch again, now that its command has become `resume`.
        const launch = [...m.launches.entries()].find(
          ([, l]) => l.runId === runId && l.generation === run.generation,
        );
        if (launch && v % 4 === 3)
          return { t: "launch", ...fenced, launch: (LAUNCH_IDS as readonly string[]).indexOf(launch[0]) };
        return run.stepCount >= 3 && v % 2 === 0
          ? { t: "finish", ...fenced, ending: v }
          : { t: "startVisit", ...fenced, path: v, visit: "next" };
      }
      const i = v % open.length;
      const [path = "plan", visit = "1"] = nth(open, i).split("#");
      const messageId = `msg:${runId}:${path}:${visit}:step_prompt`;
      const turn = [...m.turns.values()].find((t) => t.messageId === messageId && t.runId !== null);
      const effects = [...m.effects.entries()].filter(([id]) => id.startsWith(`${runId}:${path}:${visit}:`));
      const prompt = m.ownablePrompts().indexOf(messageId);
      // Whatever a worker and the extension could do next inside this visit; `v` picks one.
      // A worker finishes the visit alone (and starts the next later), or moves on in one advance.
      const options: Op[] = [
        v % 3 === 2
          ? { t: "advanceVisit", ...fenced, path: i, visit: "last", to: v, output: v }
          : { t: "finishVisit", ...fenced, path: i, visit: "last", result: v % 2 },
      ];
      if (!m.messages.has(messageId)) {
        options.push({ t: "enqueue", ...fenced, path: i, visit: "last", notify: false, body: 0 });
      }
      if (!turn && prompt >= 0)
        options.push({ t: "startTurn", session: 0, request: 0, message: prompt, smart: true });
      if (turn?.status === "open") {
        options.push({
          t: "endTurn",
          session: 0,
          request: m.openTurns().indexOf(turn),
          reason: v,
          smart: true,
        });
      }
      if (effects.length === 0) {
        options.push({
          t: "reserveEffect",
          ...fenced,
          path: i,
          visit: "last",
          manual: v % 2 === 0,
          request: 0,
        });
      }
      if (effects.some(([, e]) => e.status === "reserved")) {
        options.push({ t: "settleEffect", ...fenced, effect: 0, result: v });
        // The worker restarted inside the visit and reserves its unsettled effect again (a manual one parks).
        const [, first] = effects[0] ?? [];
        if (first)
          options.push({
            t: "reserveEffect",
            ...fenced,
            path: i,
            visit: "last",
            manual: first.manual,
            request: 0,
          });
      }
      return nth(options, Math.floor(v / 2));
    }
    default:
      return undefined;
  }
}

// ---------------------------------------------------------------------------------------------
// Operations: predict with the model, run against the store, compare, update the model
// ---------------------------------------------------------------------------------------------

/** What startNodeVisit must answer, from the model before the call. */
function expectStart(run: MRun | undefined, fence: Fence, path: string, visit: number): Expect {
  const fc0 = fenceConflict(run, fence);
  const step = run?.steps.get(`${path}#${visit}`);
  if (fc0 || !run) return refuse(fc0 ?? "not_found");
  if (run.status !== "running") return refuse("state_mismatch");
  if (step && step.status !== "running") return ADOPTED;
  if (run.paused) return RECOVERY;
  if (step) return APPLIED;
  if (visit !== resolveVisit(run, path, "next")) return refuse("state_mismatch");
  return APPLIED;
}

/** Apply a start's answer to the model and check it against the store; true when the run changed. */
function recordStart(
  m: Model,
  store: RunStore,
  label: string,
  run: MRun | undefined,
  runId: string,
  path: string,
  visit: number,
  t: Transition<NodeVisitState>,
): boolean {
  if (!run) return false;
  if (t.kind === "recoveryRequired") {
    same(m, label, "recovery reason", t.reason, PAUSE_AT_BOUNDARY);
    m.park(run, PAUSE_AT_BOUNDARY);
    return true;
  }
  if (t.kind !== "applied" && t.kind !== "adopted") return false;
  const key = `${path}#${visit}`;
  const step = run.steps.get(key);
  if (t.kind === "applied") {
    if (step) step.attempt += 1;
    else {
      run.steps.set(key, { status: "running", attempt: 1, outputKey: null, next: null, code: null });
      run.stepCount += 1;
      run.cursor = { path, visit };
    }
  }
  const saved = store.listRunSteps(runId).find((s) => s.path === path && s.visit === visit);
  same(
    m,
    label,
    "returned visit vs listRunSteps",
    [t.value.attempt, t.value.status === "running"],
    [saved?.attempt, saved?.status === "running"],
  );
  return t.kind === "applied";
}

/** What finishNodeVisit must answer, from the model before the call. */
function expectFinish(
  run: MRun | undefined,
  fence: Fence,
  path: string,
  visit: number,
  result: NodeVisitResult,
): Expect {
  const fc0 = fenceConflict(run, fence);
  const step = run?.steps.get(`${path}#${visit}`);
  if (fc0 || !run) return refuse(fc0 ?? "not_found");
  if (!step) return refuse("visit_not_open");
  if (step.status !== "running") return sameVisitResult(step, result) ? ADOPTED : refuse("state_mismatch");
  if (run.status !== "running") return refuse("state_mismatch");
  return APPLIED;
}

/** Apply a finish's answer to the model and check it against the store; true when the run changed. */
function recordFinish(
  m: Model,
  store: RunStore,
  label: string,
  run: MRun | undefined,
  runId: string,
  path: string,
  visit: number,
  result: NodeVisitResult,
  t: Transition<NodeVisitState>,
): boolean {
  const step = run?.steps.get(`${path}#${visit}`);
  if (!run || !step || (t.kind !== "applied" && t.kind !== "adopted")) return false;
  if (t.kind === "applied") {
    step.status = result.status;
    step.outputKey = result.output === undefined ? null : canon(result.output);
    step.next = result.next ?? null;
    step.code = result.status === "succeeded" ? null : result.error.code;
    run.progress += 1;
  }
  const saved = store.listRunSteps(runId).find((s) => s.path === path && s.visit === visit);
  const value = t.value;
  same(
    m,
    label,
    "returned visit vs listRunSteps",
    [
      value.attempt,
      value.status === "finished" ? value.result.status : "running",
      value.status === "finished" ? (value.result.next ?? null) : null,
    ],
    [saved?.attempt, saved?.status, saved?.nextPath],
  );
  return t.kind === "applied";
}

function execute(m: Model, r: Real, op: Op): StepEffect {
  const store = r.h.store;
  switch (op.t) {
    case "reserve": {
      // A smart reservation takes a free session that already holds a parked or finished run, so that
      // later resumes and restarts meet a busy session; otherwise any origin and any run ID.
      const fresh = RUN_IDS.filter((id) => !m.runs.has(id));
      const contended = SESSIONS.filter(
        (session) => !m.activeIn(session) && [...m.runs.values()].some((run) => run.session === session),
      );
      const smart = op.smart && fresh.length > 0 && contended.length > 0;
      const runId = smart ? nth(fresh, op.id) : nth(RUN_IDS, op.id);
      const originIdx = op.origin % (SESSIONS.length + 1);
      const session = smart
        ? nth(contended, op.origin)
        : originIdx < SESSIONS.length
          ? nth(SESSIONS, originIdx)
          : null;
      const key = canon([session, op.input]);
      const label = `reservePreparedRun(${runId}, ${session ?? "cli"}, input ${op.input})`;
      m.log.push(label);
      const existing = m.run(runId);
      const busy = session === null ? undefined : m.activeIn(session);
      const exp = existing
        ? existing.originCommand === "start" &&
          (existing.reserveKey === key || (existing.inputCleared && existing.session === session))
          ? ADOPTED
          : refuse("request_mismatch")
        : busy
          ? refuse("session_busy")
          : APPLIED;
      const t = call(m, label, () =>
        store.reservePreparedRun(
          preparedRun(runId, {
            origin: session === null ? { kind: "cli" } : { kind: "pi", sessionId: session },
            input: { task: `task-${op.input}` },
          }),
        ),
      );
      expectKind(m, label, t, exp);
      if (t.kind === "conflict" && t.evidence.kind === "session_busy") {
        same(m, label, "session_busy evidence", t.evidence.activeRunId, busy?.runId);
      }
      if (t.kind === "applied" || t.kind === "adopted") valueIsCurrentRun(m, r, label, t.value);
      if (t.kind !== "applied") return NOTHING;
      m.add(newRun(runId, session, "start", { reserveKey: key }));
      return { bumped: [], created: [runId] };
    }

    case "claim": {
      const runId = m.pick(op.run, op.t);
      const run = m.run(runId);
      const claimToken = nth(CLAIM_TOKENS, op.token);
      const leaseMs = nth(LEASES, op.lease);
      const expectedRevision =
        op.rev === "none" || !run ? undefined : op.rev === "ok" ? run.revision : run.revision - 1;
      const label = `claimRun(${runId}, ${claimToken}, ${leaseMs}ms${expectedRevision === undefined ? "" : `, rev=${expectedRevision}`})`;
      m.log.push(label);
      let exp: Expect;
      if (!run) exp = refuse("not_found");
      else if (run.status === "starting" && run.token === claimToken) exp = ADOPTED;
      else if (expectedRevision !== undefined && expectedRevision !== run.revision)
        exp = refuse("revision_mismatch");
      else if (!isAllowedTransition(run.status, "starting")) exp = refuse("invalid_transition");
      else if (run.status === "parked" && run.session !== null && m.activeIn(run.session))
        exp = refuse("session_busy");
      else exp = APPLIED;
      const t = call(m, label, () => store.claimRun({ runId, claimToken, leaseMs, expectedRevision }));
      expectKind(m, label, t, exp);
      if (!run || (t.kind !== "applied" && t.kind !== "adopted")) return NOTHING;
      if (t.kind === "applied") {
        // A claim of a parked run resumes it and clears a pause request, except the relaunch after a
        // lost worker (not an explicit resume): the pause asked for before the worker died still holds.
        if (run.status === "parked" && run.recovery?.code !== "worker_lost") run.paused = false;
        run.status = "starting";
        run.generation += 1;
        run.token = claimToken;
        run.lease = m.now + leaseMs;
        run.recovery = null;
        run.fences.push({ runId, generation: run.generation, claimToken });
      }
      const current = store.getRun(runId);
      same(m, label, "claim revision vs getRun", t.value.revision, current?.revision);
      same(
        m,
        label,
        "claim command",
        [t.value.command.type, t.value.command.runId, t.value.command.generation, t.value.command.claimToken],
        [run.nextCommand, runId, run.generation, claimToken],
      );
      return { bumped: t.kind === "applied" ? [runId] : [], created: [] };
    }

    case "markRunning": {
      const runId = m.pick(op.run, op.t);
      const run = m.run(runId);
      const fence = makeFence(run, runId, op.fence, op.stale);
      const label = `markRunning(${runId}, ${fenceText(fence)})`;
      m.log.push(label);
      const fc0 = fenceConflict(run, fence);
      let exp: Expect;
      if (fc0 || !run) exp = refuse(fc0 ?? "not_found");
      else if (run.status === "running") exp = ADOPTED;
      else if (!isAllowedTransition(run.status, "running")) exp = refuse("invalid_transition");
      else exp = APPLIED;
      const t = call(m, label, () => store.markRunning(fence));
      expectKind(m, label, t, exp);
      if (!run || (t.kind !== "applied" && t.kind !== "adopted")) return NOTHING;
      if (t.kind === "applied") {
        run.status = "running";
        run.lease = null;
        run.nextCommand = "resume";
        run.started = true;
      }
      valueIsCurrentRun(m, r, label, t.value);
      return { bumped: t.kind === "applied" ? [runId] : [], created: [] };
    }

    case "finish": {
      const runId = m.pick(op.run, op.t);
      const run = m.run(runId);
      const fence = makeFence(run, runId, op.fence, op.stale);
      const ending = nth(ENDINGS, op.ending);
      const target = ending.outcome === "completed" || ending.outcome === "waiting" ? "done" : "failed";
      const finalKey =
        ending.outcome === "completed"
          ? canon(ending.output)
          : ending.outcome === "waiting"
            ? canon({ checkpoint: ending.checkpoint })
            : null;
      const errorCode =
        ending.outcome === "failed" || ending.outcome === "timed_out" ? ending.error.code : null;
      const label = `finishRun(${runId}, ${fenceText(fence)}, ending ${op.ending % ENDINGS.length}: ${ending.outcome})`;
      m.log.push(label);
      const fc0 = fenceConflict(run, fence);
      let exp: Expect;
      if (
        run &&
        run.outcome === ending.outcome &&
        run.generation === fence.generation + 1 &&
        run.finalKey === finalKey &&
        run.errorCode === errorCode
      )
        exp = ADOPTED;
      else if (fc0 || !run) exp = refuse(fc0 ?? "not_found");
      else if (!isAllowedTransition(run.status, target)) exp = refuse("invalid_transition");
      else if (run.status === "starting" && target !== "failed") exp = refuse("invalid_transition");
      else exp = APPLIED;
      const t = call(m, label, () => store.finishRun(fence, ending));
      expectKind(m, label, t, exp);
      if (!run || (t.kind !== "applied" && t.kind !== "adopted")) return NOTHING;
      if (t.kind === "applied") {
        if (ending.outcome === "waiting") {
          run.cursor = { path: ending.checkpoint.path, visit: ending.checkpoint.visit };
        }
        m.terminalize(run, target, ending.outcome, finalKey, errorCode, true);
      }
      valueIsCurrentRun(m, r, label, t.value);
      return { bumped: t.kind === "applied" ? [runId] : [], created: [] };
    }

    case "cancel": {
      const runId = m.pick(op.run, op.t);
      const run = m.run(runId);
      const expectedRevision =
        op.rev === "none" || !run ? undefined : op.rev === "ok" ? run.revision : run.revision - 1;
      const label = `cancelRun(${runId}${expectedRevision === undefined ? "" : `, rev=${expectedRevision}`})`;
      m.log.push(label);
      let exp: Expect;
      if (!run) exp = refuse("not_found");
      else if (run.status === "cancelled") exp = ADOPTED;
      else if (expectedRevision !== undefined && expectedRevision !== run.revision)
        exp = refuse("revision_mismatch");
      else if (!isAllowedTransition(run.status, "cancelled")) exp = refuse("invalid_transition");
      else exp = APPLIED;
      const t = call(m, label, () => store.cancelRun({ runId, expectedRevision }));
      expectKind(m, label, t, exp);
      if (!run || (t.kind !== "applied" && t.kind !== "adopted")) return NOTHING;
      if (t.kind === "applied") m.terminalize(run, "cancelled", "cancelled", null, "cancelled", run.started);
      valueIsCurrentRun(m, r, label, t.value);
      return { bumped: t.kind === "applied" ? [runId] : [], created: [] };
    }

    case "park": {
      const runId = m.pick(op.run, op.t);
      const run = m.run(runId);
      const fence = makeFence(run, runId, op.fence, op.stale);
      const reason = nth(PARK_REASONS, op.reason);
      const label = `parkRun(${runId}, ${fenceText(fence)}, ${canon(reason)})`;
      m.log.push(label);
      const fc0 = fenceConflict(run, fence);
      let exp: Expect;
      if (
        run &&
        run.status === "parked" &&
        run.generation === fence.generation + 1 &&
        canon(run.recovery) === canon(reason)
      )
        exp = ADOPTED;
      else if (fc0 || !run) exp = refuse(fc0 ?? "not_found");
      // A worker parks only a running run; `starting -> parked` is the verdict on a lost launch.
      else if (run.status !== "running") exp = refuse("invalid_transition");
      else exp = APPLIED;
      const t = call(m, label, () => store.parkRun(fence, reason));
      expectKind(m, label, t, exp);
      if (!run || (t.kind !== "applied" && t.kind !== "adopted")) return NOTHING;
      if (t.kind === "applied") m.park(run, reason);
      valueIsCurrentRun(m, r, label, t.value);
      return { bumped: t.kind === "applied" ? [runId] : [], created: [] };
    }

    case "pause": {
      // Half the time any run: a pause request on a run that is not live must be refused.
      const runId = m.pick(op.run.idx % 2 === 0 ? op.run : { ...op.run, smart: false }, op.t);
      const run = m.run(runId);
      const label = `requestPause(${runId})`;
      m.log.push(label);
      let exp: Expect;
      if (!run) exp = refuse("not_found");
      else if (run.paused) exp = ADOPTED;
      else if (run.status !== "running" && run.status !== "starting") exp = refuse("state_mismatch");
      else exp = APPLIED;
      const t = call(m, label, () => store.requestPause({ runId }));
      expectKind(m, label, t, exp);
      if (!run || (t.kind !== "applied" && t.kind !== "adopted")) return NOTHING;
      if (t.kind === "applied") run.paused = true;
      valueIsCurrentRun(m, r, label, t.value);
      return { bumped: t.kind === "applied" ? [runId] : [], created: [] };
    }

    case "advance": {
      const ms = nth(ADVANCES, op.advance);
      m.log.push(`advance clock ${ms}ms`);
      m.now += ms;
      r.h.clock.now += ms;
      return NOTHING;
    }

    case "recover": {
      const ms = nth(ADVANCES, op.advance);
      m.now += ms;
      r.h.clock.now += ms;
      const runId = m.pick(op.run, op.t);
      const run = m.run(runId);
      const label = `advance clock ${ms}ms; recoverExpiredStarting(${runId})`;
      m.log.push(label);
      let exp: Expect;
      if (!run) exp = refuse("not_found");
      else if (run.status !== "starting") exp = refuse("invalid_transition");
      else if (run.lease !== null && run.lease > m.now) exp = refuse("state_mismatch");
      else exp = APPLIED;
      const t = call(m, label, () => store.recoverExpiredStarting({ runId }));
      expectKind(m, label, t, exp);
      if (!run || t.kind !== "applied") return NOTHING;
      if (run.nextCommand === "resume") {
        // Saved state is never relaunched by itself: an expired resume parks with its reason.
        m.park(run, {
          code: "worker_lost_no_progress",
          message:
            "The host stopped before the worker accepted its resume command; resume the run to launch it again.",
        });
      } else {
        run.status = "queued";
        run.token = null;
        run.lease = null;
        run.generation += 1;
      }
      valueIsCurrentRun(m, r, label, t.value);
      return { bumped: t.kind === "applied" ? [runId] : [], created: [] };
    }

    case "startVisit": {
      const runId = m.pick(op.run, op.t);
      const run = m.run(runId);
      const fence = makeFence(run, runId, op.fence, op.stale);
      const path = nth(PATHS, op.path);
      const visit = resolveVisit(run, path, op.visit);
      const label = `startNodeVisit(${runId}, ${fenceText(fence)}, ${path}#${visit})`;
      m.log.push(label);
      const exp = expectStart(run, fence, path, visit);
      const t = call(m, label, () => store.startNodeVisit(fence, { path, visit, nodeKind: "compute" }));
      expectKind(m, label, t, exp);
      return recordStart(m, store, label, run, runId, path, visit, t)
        ? { bumped: [runId], created: [] }
        : NOTHING;
    }

    case "finishVisit": {
      const runId = m.pick(op.run, op.t);
      const run = m.run(runId);
      const fence = makeFence(run, runId, op.fence, op.stale);
      const { path, visit } = spot(run, op.run.smart, op.path, op.visit);
      const result = nth(VISIT_RESULTS, op.result);
      const label = `finishNodeVisit(${runId}, ${fenceText(fence)}, ${path}#${visit}, ${result.status} #${op.result % VISIT_RESULTS.length})`;
      m.log.push(label);
      const exp = expectFinish(run, fence, path, visit, result);
      const t = call(m, label, () => store.finishNodeVisit(fence, { path, visit, result }));
      expectKind(m, label, t, exp);
      return recordFinish(m, store, label, run, runId, path, visit, result, t)
        ? { bumped: [runId], created: [] }
        : NOTHING;
    }

    case "advanceVisit": {
      // A succeeded finish and the start of the node it leads to, in one transaction: the model is the
      // finish then the start, as separate calls would predict them.
      const runId = m.pick(op.run, op.t);
      const run = m.run(runId);
      const fence = makeFence(run, runId, op.fence, op.stale);
      const { path, visit } = spot(run, op.run.smart, op.path, op.visit);
      const to = nth(PATHS, op.to);
      // Every third one is a failure that an outcome route takes to `to`, with a shell's report.
      const routed = op.output % 3 === 2;
      const result: NodeVisitResult = routed
        ? {
            status: "failed",
            error: { code: "node_failed", message: "It broke." },
            next: to,
            output: { exitCode: 1 },
          }
        : { status: "succeeded", output: { n: op.output % 2 }, next: to };
      const label = `advanceNodeVisit(${runId}, ${fenceText(fence)}, ${path}#${visit} -> ${to}, ${routed ? "routed failure" : `output #${op.output % 2}`})`;
      m.log.push(label);
      const expFinish = expectFinish(run, fence, path, visit, result);
      // The start's visit number counts the finished visit when it re-enters the same node.
      const toVisit = resolveVisit(run, to, "next");
      const t = call(m, label, () =>
        store.advanceNodeVisit(fence, {
          finish: { path, visit, result },
          start: { path: to, visit: toVisit, nodeKind: "compute" },
        }),
      );
      expectKind(m, label, t, expFinish);
      if (t.kind !== "applied" && t.kind !== "adopted") return NOTHING;
      const finished: Transition<NodeVisitState> = { kind: t.kind, value: t.value.finished };
      const finishBumped = recordFinish(m, store, label, run, runId, path, visit, result, finished);
      const startLabel = `${label}: start ${to}#${toVisit}`;
      const claimOnly: Fence = {
        runId: fence.runId,
        generation: fence.generation,
        claimToken: fence.claimToken,
      };
      const expStart = expectStart(run, claimOnly, to, toVisit);
      expectKind(m, startLabel, t.value.started, expStart);
      m.lastResult = `${routed ? "routed:" : ""}${t.kind}+${m.lastResult}`;
      const startBumped = recordStart(m, store, startLabel, run, runId, to, toVisit, t.value.started);
      return finishBumped || startBumped ? { bumped: [runId], created: [] } : NOTHING;
    }

    case "reserveEffect": {
      const runId = m.pick(op.run, op.t);
      const run = m.run(runId);
      const fence = makeFence(run, runId, op.fence, op.stale);
      const { path, visit } = spot(run, op.run.smart, op.path, op.visit);
      const effectType = op.manual ? "http.post" : "fs.write";
      const effectId = `${runId}:${path}:${visit}:${effectType}:0`;
      const label = `reserveEffect(${runId}, ${fenceText(fence)}, ${effectId}, request ${op.request})`;
      m.log.push(label);
      const fc0 = fenceConflict(run, fence);
      const existing = m.effects.get(effectId);
      const manualReason: RecoveryReason = {
        code: "manual_effect_unsettled",
        message: `Manual effect ${effectType} was started but never settled; check whether it happened, then resume.`,
        effectId,
      };
      let exp: Expect;
      if (fc0 || !run) exp = refuse(fc0 ?? "not_found");
      else if (run.status !== "running") exp = refuse("state_mismatch");
      else if (run.steps.get(`${path}#${visit}`)?.status !== "running") exp = refuse("visit_not_open");
      else if (existing && existing.request !== op.request) exp = refuse("request_mismatch");
      else if (existing && existing.status === "reserved" && existing.manual) exp = RECOVERY;
      else if (existing) exp = ADOPTED;
      else exp = APPLIED;
      const t = call(m, label, () =>
        store.reserveEffect(fence, {
          effectId,
          path,
          visit,
          effectType,
          ordinal: 0,
          mode: op.manual ? "manual" : "idempotent",
          request: { v: op.request },
        }),
      );
      expectKind(m, label, t, exp);
      if (!run) return NOTHING;
      if (t.kind === "recoveryRequired") {
        same(m, label, "recovery reason", t.reason, manualReason);
        m.park(run, manualReason);
        return { bumped: [runId], created: [] };
      }
      if (t.kind !== "applied" && t.kind !== "adopted") return NOTHING;
      if (t.kind === "applied") {
        m.effects.set(effectId, {
          runId,
          manual: op.manual,
          request: op.request,
          status: "reserved",
          valueKey: null,
          code: null,
        });
        run.progress += 1;
      }
      const saved = store.listRunEffects(runId).find((e) => e.effectId === effectId);
      same(
        m,
        label,
        "returned effect vs listRunEffects",
        t.value.status,
        saved?.status === "reserved" ? "reserved" : "settled",
      );
      return { bumped: t.kind === "applied" ? [runId] : [], created: [] };
    }

    case "settleEffect": {
      const runId = m.pick(op.run, op.t);
      const run = m.run(runId);
      const fence = makeFence(run, runId, op.fence, op.stale);
      const ids = [...m.effects.entries()].filter(([, e]) => e.runId === runId).map(([id]) => id);
      const reserved = ids.filter((id) => m.effects.get(id)?.status === "reserved");
      const effectId = nth(
        op.run.smart && reserved.length > 0 && op.effect < 3 ? reserved : [...ids, `${runId}:missing`],
        op.effect,
      );
      const effect = m.effects.get(effectId);
      const result = nth(EFFECT_RESULTS, op.result);
      const label = `settleEffect(${runId}, ${fenceText(fence)}, ${effectId}, result #${op.result % EFFECT_RESULTS.length})`;
      m.log.push(label);
      const fc0 = fenceConflict(run, fence);
      let exp: Expect;
      if (fc0 || !run) exp = refuse(fc0 ?? "not_found");
      else if (!effect) exp = refuse("not_found");
      else if (effect.status !== "reserved") {
        const equal = result.ok
          ? effect.status === "settled" && effect.valueKey === canon(result.value)
          : effect.status === "failed" && effect.code === result.error.code;
        exp = equal ? ADOPTED : refuse("state_mismatch");
      } else if (run.status !== "running") exp = refuse("state_mismatch");
      else exp = APPLIED;
      const t = call(m, label, () => store.settleEffect(fence, { effectId, result }));
      expectKind(m, label, t, exp);
      if (!run || !effect || (t.kind !== "applied" && t.kind !== "adopted")) return NOTHING;
      if (t.kind === "applied") {
        effect.status = result.ok ? "settled" : "failed";
        effect.valueKey = result.ok ? canon(result.value) : null;
        effect.code = result.ok ? null : result.error.code;
        run.progress += 1;
      }
      const saved = store.listRunEffects(runId).find((e) => e.effectId === effectId);
      same(
        m,
        label,
        "returned effect vs listRunEffects",
        t.value.status === "settled" ? (t.value.result.ok ? "settled" : "failed") : "reserved",
        saved?.status,
      );
      return { bumped: t.kind === "applied" ? [runId] : [], created: [] };
    }

    case "enqueue": {
      const runId = m.pick(op.run, op.t);
      const run = m.run(runId);
      const fence = makeFence(run, runId, op.fence, op.stale);
      const { path, visit } = spot(run, op.run.smart, op.path, op.visit);
      const kind = op.notify ? "notify" : "step_prompt";
      const messageId = `msg:${runId}:${path}:${visit}:${kind}`;
      const body = `Work on ${path} (visit ${visit}), wording ${op.body}.`;
      const label = `enqueueMessage(${runId}, ${fenceText(fence)}, ${messageId}, wording ${op.body})`;
      m.log.push(label);
      const fc0 = fenceConflict(run, fence);
      const existing = m.messages.get(messageId);
      let exp: Expect;
      if (fc0 || !run) exp = refuse(fc0 ?? "not_found");
      else if (existing) exp = existing.body === body ? ADOPTED : refuse("request_mismatch");
      else if (run.status !== "running") exp = refuse("state_mismatch");
      else exp = APPLIED;
      const t = call(m, label, () =>
        store.enqueueMessage(fence, { messageId, kind, path, visit, body, triggerTurn: true }),
      );
      expectKind(m, label, t, exp);
      if (!run || (t.kind !== "applied" && t.kind !== "adopted")) return NOTHING;
      if (t.kind === "applied") {
        m.messages.set(messageId, {
          runId,
          session: run.session,
          kind,
          path,
          visit,
          body,
          status: "pending",
        });
        run.progress += 1;
      }
      same(m, label, "returned message vs the saved one", t.value, readMessage(r, messageId));
      return { bumped: t.kind === "applied" ? [runId] : [], created: [] };
    }

    case "startTurn": {
      // Smart: a prompt a turn can belong to. Otherwise often a stale prompt (its visit finished or its
      // run stopped running), which must never own a turn; or any message, or an unknown one.
      const live = m.ownablePrompts();
      const stalePrompts = [...m.messages.entries()]
        .filter(([id, msg]) => msg.kind === "step_prompt" && msg.session !== null && !live.includes(id))
        .map(([id]) => id);
      const pool =
        op.smart && live.length > 0
          ? live
          : op.message % 2 === 0 && stalePrompts.length > 0
            ? stalePrompts
            : [...m.messages.keys(), "msg:unknown"];
      // Mostly a fresh Pi request; sometimes a repeated report of an earlier one (same or other message).
      const earlier =
        op.request === 3 && m.turns.size > 0 ? nth([...m.turns.values()], op.message) : undefined;
      const messageId = earlier && op.session % 2 === 0 ? earlier.messageId : nth(pool, op.message);
      const msg = m.messages.get(messageId);
      const sessionId =
        earlier?.session ?? (op.session < 2 && msg?.session ? msg.session : nth(SESSIONS, op.session));
      const requestId = earlier?.requestId ?? `q${m.turns.size}`;
      const label = `startTurn(${sessionId}, ${requestId}, ${messageId})`;
      m.log.push(label);
      const existing = m.turns.get(`${sessionId}|${requestId}`);
      const ownerRun = msg ? m.run(msg.runId) : undefined;
      const owned =
        msg !== undefined &&
        msg.kind === "step_prompt" &&
        msg.session === sessionId &&
        msg.status !== "cancelled" &&
        ownerRun?.status === "running" &&
        ownerRun.steps.get(`${msg.path}#${msg.visit}`)?.status === "running";
      const open = [...m.turns.values()].some((turn) => turn.session === sessionId && turn.status === "open");
      let exp: Expect;
      if (existing) exp = existing.messageId === messageId ? ADOPTED : refuse("request_mismatch");
      else if (owned && open) exp = refuse("state_mismatch");
      else exp = APPLIED;
      const t = call(m, label, () => store.startTurn({ sessionId, requestId, messageId }));
      expectKind(m, label, t, exp);
      if (t.kind !== "applied" && t.kind !== "adopted") return NOTHING;
      if (t.kind === "applied") {
        m.turns.set(`${sessionId}|${requestId}`, {
          session: sessionId,
          requestId,
          messageId,
          runId: owned && msg ? msg.runId : null,
          path: owned && msg ? msg.path : null,
          visit: owned && msg ? msg.visit : null,
          status: owned ? "open" : "unowned",
          reason: null,
        });
      }
      const saved = readTurn(r, sessionId, requestId);
      same(m, label, "returned turn vs the saved one", t.value, {
        owner: saved?.status === "unowned" ? "none" : "workflow",
        turn: saved,
      });
      return { bumped: t.kind === "applied" && owned && msg ? [msg.runId] : [], created: [] };
    }

    case "endTurn": {
      const open = m.openTurns();
      const pick = op.smart && open.length > 0 ? nth(open, op.request) : undefined;
      const sessionId = pick?.session ?? nth(SESSIONS, op.session);
      const requestId = pick?.requestId ?? nth(REQUEST_IDS, op.request);
      const reason = nth(TURN_END_REASONS, op.reason);
      const label = `endTurn(${sessionId}, ${requestId}, ${reason})`;
      m.log.push(label);
      const turn = m.turns.get(`${sessionId}|${requestId}`);
      let exp: Expect;
      if (!turn) exp = refuse("not_found");
      else if (turn.status === "ended" && turn.reason === reason) exp = ADOPTED;
      else if (turn.status !== "open") exp = refuse("state_mismatch");
      else exp = APPLIED;
      const t = call(m, label, () => store.endTurn({ sessionId, requestId, reason }));
      expectKind(m, label, t, exp);
      if (!turn || (t.kind !== "applied" && t.kind !== "adopted")) return NOTHING;
      if (t.kind === "applied") {
        turn.status = "ended";
        turn.reason = reason;
      }
      same(m, label, "returned turn vs the saved one", t.value, readTurn(r, sessionId, requestId));
      return { bumped: t.kind === "applied" && turn.runId ? [turn.runId] : [], created: [] };
    }

    case "launch": {
      const runId = m.pick(op.run, op.t);
      const run = m.run(runId);
      const fence = makeFence(run, runId, op.fence, op.stale);
      const launchId = nth(LAUNCH_IDS, op.launch);
      const commandType = run?.nextCommand ?? "start";
      const label = `recordWorkerLaunch(${runId}, ${fenceText(fence)}, ${launchId})`;
      m.log.push(label);
      const existing = m.launches.get(launchId);
      const fc0 = fenceConflict(run, fence);
      let exp: Expect;
      if (existing)
        exp =
          existing.runId === fence.runId &&
          existing.generation === fence.generation &&
          existing.commandType === commandType
            ? ADOPTED
            : refuse("request_mismatch");
      else if (fc0 || !run) exp = refuse(fc0 ?? "not_found");
      else if (run.status !== "starting" && run.status !== "running") exp = refuse("state_mismatch");
      else exp = APPLIED;
      const t = call(m, label, () => store.recordWorkerLaunch(fence, { launchId, commandType, pid: 4242 }));
      expectKind(m, label, t, exp);
      if (t.kind !== "applied" && t.kind !== "adopted") return NOTHING;
      if (t.kind === "applied" && run) {
        m.launches.set(launchId, {
          runId,
          generation: run.generation,
          commandType,
          progressAt: run.progress,
          decision: null,
        });
      }
      same(m, label, "returned launch vs the saved one", t.value, readLaunch(r, launchId));
      return { bumped: t.kind === "applied" ? [runId] : [], created: [] };
    }

    case "exit": {
      // Mostly a launch still waiting for its exit; sometimes any launch (a repeat) or an unknown one.
      const undecided = [...m.launches.entries()].filter(([, l]) => l.decision === null).map(([id]) => id);
      const launchId =
        op.launch < 3 && undecided.length > 0
          ? nth(undecided, op.launch)
          : nth([...m.launches.keys(), "L-missing"], op.launch);
      const launch = m.launches.get(launchId);
      const exit = nth(EXITS, op.exit);
      const label = `recordWorkerExit(${launchId}, ${canon(exit)})`;
      m.log.push(label);
      const run = launch ? m.run(launch.runId) : undefined;
      let exp: Expect;
      if (!launch || !run) exp = refuse("not_found");
      else if (launch.decision !== null) exp = ADOPTED;
      else exp = APPLIED;
      const t = call(m, label, () => store.recordWorkerExit({ launchId, exit }));
      expectKind(m, label, t, exp);
      if (!launch || !run || (t.kind !== "applied" && t.kind !== "adopted")) return NOTHING;
      if (t.kind === "applied") {
        const holdsClaim =
          run.generation === launch.generation && (run.status === "starting" || run.status === "running");
        let decision: WorkerExitDecision = "none";
        if (holdsClaim) {
          const reported = exit.kind === "reported" ? exit.error : undefined;
          if (reported) {
            m.terminalize(run, "failed", "failed", null, reported.code, true);
            decision = "failed";
          } else if (run.progress > launch.progressAt) {
            m.park(run, {
              code: "worker_lost",
              message: "The worker stopped after saving progress; relaunching.",
              launchId,
            });
            decision = "relaunch";
          } else if (run.status === "starting") {
            // A vanished process never fails a run: it parks, and a resume gives the same command again.
            m.park(run, {
              code: "worker_lost_no_progress",
              message: `The worker stopped before it accepted its ${launch.commandType} command; resume the run to launch it again.`,
              launchId,
            });
            decision = "parked";
          } else {
            m.park(run, {
              code: "worker_lost_no_progress",
              message:
                "The worker stopped without saving progress since it was launched; resume the run after fixing the cause.",
              launchId,
            });
            decision = "parked";
          }
        }
        launch.decision = decision;
      }
      same(m, label, "exit decision", t.value.decision, launch.decision);
      same(m, label, "returned launch vs the saved one", t.value.launch, readLaunch(r, launchId));
      return { bumped: t.kind === "applied" ? [run.runId] : [], created: [] };
    }

    case "restart": {
      const parentId = m.pick(op.parent, op.t);
      const parent = m.run(parentId);
      const runId = op.child % 3 === 0 ? `${parentId}.r` : op.child % 3 === 1 ? `${parentId}.r2` : parentId;
      const label = `prepareRestart(${runId} <- ${parentId})`;
      m.log.push(label);
      const busy = parent?.session ? m.activeIn(parent.session) : undefined;
      let exp: Expect;
      if (!parent) exp = refuse("not_found");
      else if (!isTerminalStatus(parent.status)) exp = refuse("parent_not_eligible");
      else if (parent.restartChild !== null)
        exp = parent.restartChild === runId ? ADOPTED : refuse("child_exists");
      else if (m.runs.has(runId)) exp = refuse("request_mismatch");
      else if (parent.inputCleared) exp = refuse("input_cleared");
      else if (busy) exp = refuse("session_busy");
      else exp = APPLIED;
      const t = call(m, label, () => store.prepareRestart({ runId, parentRunId: parentId }));
      expectKind(m, label, t, exp);
      if (!parent || (t.kind !== "applied" && t.kind !== "adopted")) return NOTHING;
      if (t.kind === "applied") {
        parent.restartChild = runId;
        m.add(
          newRun(runId, parent.session, "restart", {
            parentRunId: parentId,
            restartNumber: parent.restartNumber + 1,
          }),
        );
      }
      valueIsCurrentRun(m, r, label, t.value);
      return { bumped: [], created: t.kind === "applied" ? [runId] : [] };
    }

    case "continue": {
      const parentId = m.pick(op.parent, op.t);
      const parent = m.run(parentId);
      const runId = op.child % 3 === 0 ? `${parentId}.c` : op.child % 3 === 1 ? `${parentId}.c2` : parentId;
      const accepted = op.cursorOk
        ? {
            path: parent?.cursor?.path ?? "plan",
            visit: parent?.cursor?.visit ?? 1,
            answer: { ok: op.answer },
          }
        : { path: "build/test", visit: 9, answer: { ok: op.answer } };
      const answerKey = canon(accepted.answer);
      const label = `prepareContinuation(${runId} <- ${parentId}, ${accepted.path}#${accepted.visit}, answer ${op.answer})`;
      m.log.push(label);
      const busy = parent?.session ? m.activeIn(parent.session) : undefined;
      const child = parent?.continueChild ? m.run(parent.continueChild) : undefined;
      let exp: Expect;
      if (!parent) exp = refuse("not_found");
      else if (parent.status !== "done" || parent.outcome !== "waiting") exp = refuse("parent_not_eligible");
      else if (parent.cursor?.path !== accepted.path || parent.cursor.visit !== accepted.visit)
        exp = refuse("state_mismatch");
      else if (child)
        exp = child.runId === runId && child.answerKey === answerKey ? ADOPTED : refuse("child_exists");
      else if (m.runs.has(runId)) exp = refuse("request_mismatch");
      else if (busy) exp = refuse("session_busy");
      else exp = APPLIED;
      const t = call(m, label, () =>
        store.prepareContinuation({ answerer: "human", runId, parentRunId: parentId, accepted }),
      );
      expectKind(m, label, t, exp);
      if (!parent || (t.kind !== "applied" && t.kind !== "adopted")) return NOTHING;
      if (t.kind === "applied") {
        parent.continueChild = runId;
        m.add(
          newRun(runId, parent.session, "continue", {
            parentRunId: parentId,
            restartNumber: parent.restartNumber,
            answerKey,
          }),
        );
      }
      valueIsCurrentRun(m, r, label, t.value);
      // The parent records who answered it (`run.answered`).
      return t.kind === "applied" ? { bumped: [parentId], created: [runId] } : { bumped: [], created: [] };
    }

    case "drive": {
      const next = derive(m, op);
      if (next) m.derived = next.t;
      return next ? execute(m, r, next) : NOTHING;
    }

    case "invalid": {
      const runId = m.pick(op.run, op.t);
      const fence = makeFence(m.run(runId), runId, "current", 0);
      // A malformed request never reaches the store: the host's RPC layer parses each one with its
      // protocol schema first. The model checks that the schema refuses it and that nothing changed.
      const attempts: Array<[string, z.ZodType, unknown]> = [
        ["markRunning with a negative generation", fenceSchema, { ...fence, generation: -1 }],
        [
          "startNodeVisit with visit 0",
          startNodeVisitSchema,
          { path: "plan", visit: 0, nodeKind: "compute" },
        ],
        [
          "reservePreparedRun with an empty workflow name",
          reservePreparedRunSchema,
          preparedRun("wf-9", { workflowName: "" }),
        ],
        [
          "finishRun with an oversized error message",
          runEndingSchema,
          { outcome: "failed", error: { code: "node_failed", message: "x".repeat(600) } },
        ],
        [
          "enqueueMessage of a terminal kind",
          enqueueMessageSchema,
          { messageId: "m1", kind: "terminal", path: "plan", visit: 1, body: "", triggerTurn: false },
        ],
      ];
      const [what, schema, value] = nth(attempts, op.which);
      const label = `invalid: ${what} (${runId})`;
      m.log.push(label);
      if (schema.safeParse(value).success) fail(m, `${label}: the protocol schema accepted it`);
      return NOTHING;
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Reading what the store saved (public readers where they exist, the read-only file otherwise)
// ---------------------------------------------------------------------------------------------

interface TurnRow {
  turn_id: string;
  run_id: string | null;
  path: string | null;
  visit: number | null;
  session_id: string;
  request_id: string;
  message_id: string;
  status: TurnRecord["status"];
  end_reason: TurnRecord["endReason"];
}

function readTurn(r: Real, sessionId: string, requestId: string): TurnRecord | undefined {
  const row = sql(r, "SELECT * FROM turns WHERE session_id = ? AND request_id = ?").get(
    sessionId,
    requestId,
  ) as TurnRow | undefined;
  if (!row) return undefined;
  return {
    turnId: row.turn_id,
    runId: row.run_id,
    path: row.path,
    visit: row.visit,
    sessionId: row.session_id,
    requestId: row.request_id,
    messageId: row.message_id,
    status: row.status,
    endReason: row.end_reason,
  };
}

function readMessage(r: Real, messageId: string): MessageRecord | undefined {
  const row = sql(r, "SELECT run_id, session_id FROM messages WHERE message_id = ?").get(messageId) as
    | { run_id: string; session_id: string | null }
    | undefined;
  if (!row) return undefined;
  if (row.session_id !== null) {
    // A Pi run's messages are readable through the public outbox reader.
    return r.h.store
      .listSessionMessages(row.session_id, ["pending", "claimed", "delivered", "cancelled"])
      .find((msg) => msg.messageId === messageId);
  }
  const full = sql(
    r,
    "SELECT m.*, b.content AS body FROM messages m JOIN blobs b ON b.hash = m.body_hash WHERE m.message_id = ?",
  ).get(messageId) as {
    message_id: string;
    run_id: string;
    session_id: string | null;
    kind: MessageRecord["kind"];
    path: string | null;
    visit: number | null;
    body: Buffer;
    trigger_turn: number;
    status: MessageRecord["status"];
    created_at: number;
    delivered_at: number | null;
  };
  return {
    messageId: full.message_id,
    runId: full.run_id,
    sessionId: full.session_id,
    kind: full.kind,
    path: full.path,
    visit: full.visit,
    body: full.body.toString("utf8"),
    triggerTurn: full.trigger_turn === 1,
    status: full.status,
    createdAt: full.created_at,
    deliveredAt: full.delivered_at,
  };
}

function readLaunch(r: Real, launchId: string) {
  const row = sql(r, "SELECT * FROM worker_launches WHERE launch_id = ?").get(launchId) as
    | {
        launch_id: string;
        run_id: string;
        generation: number;
        command_type: string;
        launch_revision: number;
        pid: number | null;
        exit_decision: WorkerExitDecision | null;
      }
    | undefined;
  if (!row) return undefined;
  return {
    launchId: row.launch_id,
    runId: row.run_id,
    generation: row.generation,
    commandType: row.command_type,
    launchRevision: row.launch_revision,
    pid: row.pid,
    exitDecision: row.exit_decision,
  };
}

// ---------------------------------------------------------------------------------------------
// Invariants, checked after every step
// ---------------------------------------------------------------------------------------------

type Snapshot = Map<string, { revision: number; status: RunStatus }>;

function snapshot(store: RunStore): Snapshot {
  return new Map(
    store
      .listRuns({ limit: 10_000 })
      .map((run) => [run.runId, { revision: run.revision, status: run.status }]),
  );
}

function checkInvariants(m: Model, r: Real, label: string, before: Snapshot, effect: StepEffect): void {
  const store = r.h.store;
  const runs = store.listRuns({ limit: 10_000 });
  same(m, label, "set of runs", runs.map((run) => run.runId).sort(), [...m.runs.keys()].sort());

  // At most one queued|starting|running run per origin session, and the reservation reader agrees.
  for (const session of SESSIONS) {
    const active = runs.filter(
      (run) =>
        run.origin.kind === "pi" &&
        run.origin.sessionId === session &&
        (ACTIVE_STATUSES as readonly RunStatus[]).includes(run.status),
    );
    if (active.length > 1) fail(m, `${label}: session ${session} holds ${active.length} active runs`);
    same(
      m,
      label,
      `reservation of ${session}`,
      store.findSessionReservation(session)?.runId ?? null,
      active[0]?.runId ?? null,
    );
  }

  for (const run of runs) {
    const model = m.run(run.runId);
    if (!model) fail(m, `${label}: unknown run ${run.runId}`);
    const prev = before.get(run.runId);

    // Revisions: strictly up on an applied change to this run, unchanged otherwise, never down.
    if (!prev) {
      if (!effect.created.includes(run.runId) || run.revision !== 1 || run.status !== "queued") {
        fail(m, `${label}: run ${run.runId} appeared with revision ${run.revision} and status ${run.status}`);
      }
    } else if (effect.bumped.includes(run.runId)) {
      if (run.revision <= prev.revision)
        fail(m, `${label}: ${run.runId} changed but its revision stayed at ${run.revision}`);
    } else if (run.revision !== prev.revision) {
      fail(
        m,
        `${label}: ${run.runId} revision moved ${prev.revision} -> ${run.revision} without an applied change to it`,
      );
    }
    const events = store.listRunEvents(run.runId, 0, 10_000);
    for (let i = 1; i < events.length; i++) {
      if ((events[i]?.revision ?? 0) <= (events[i - 1]?.revision ?? 0))
        fail(m, `${label}: ${run.runId} event revisions do not increase`);
    }
    same(m, label, `${run.runId} revision of its last event`, events.at(-1)?.revision, run.revision);

    // Every status change follows the status table (the status-table rule); terminal states are final.
    const seen = m.history.get(run.runId) ?? [];
    const last = seen.at(-1);
    if (last !== undefined && last !== run.status) {
      if (!isAllowedTransition(last, run.status))
        fail(m, `${label}: ${run.runId} moved ${last} -> ${run.status}`);
      if (seen.includes("cancelled")) fail(m, `${label}: cancelled run ${run.runId} became ${run.status}`);
    }
    if (last !== run.status) m.history.set(run.runId, [...seen, run.status]);

    // A terminal run is unclaimed and has no open turns and no live step prompts (a notification
    // it saved stays to be delivered).
    const phase = flatRun(run);
    if (isTerminalStatus(run.status)) {
      if (phase.claimed || phase.leaseExpiresAt !== null)
        fail(m, `${label}: terminal run ${run.runId} is still claimed`);
      const openTurns = { n: store.listOpenTurns(run.runId).length };
      const liveMessages = sql(
        r,
        "SELECT count(*) AS n FROM messages WHERE run_id = ? AND kind = 'step_prompt' AND status IN ('pending', 'claimed')",
      ).get(run.runId) as { n: number };
      if (openTurns.n > 0 || liveMessages.n > 0) {
        fail(
          m,
          `${label}: terminal run ${run.runId} has ${openTurns.n} open turns and ${liveMessages.n} live step prompts`,
        );
      }
      if (run.origin.kind === "pi") {
        const pending = store
          .listSessionMessages(run.origin.sessionId)
          .filter((msg) => msg.runId === run.runId);
        if (pending.some((msg) => msg.kind === "step_prompt")) {
          fail(m, `${label}: terminal run ${run.runId} still has deliverable step prompts`);
        }
      }
    }

    // The store agrees with the model.
    same(
      m,
      label,
      `run ${run.runId}`,
      {
        status: run.status,
        generation: run.generation,
        claimed: phase.claimed,
        leaseExpiresAt: phase.leaseExpiresAt,
        paused: run.paused,
        recoveryReason: phase.recoveryReason,
        outcome: phase.outcome,
        errorCode: phase.errorCode,
        nextCommand: run.nextCommand,
        originCommand: run.originCommand,
        parentRunId: run.parentRunId,
        restartNumber: run.restartNumber,
        origin: run.origin,
        cursor: run.cursor,
        stepCount: run.stepCount,
        presentationState: phase.presentationState,
        started: run.startedAt !== null,
      },
      {
        status: model.status,
        generation: model.generation,
        claimed: model.token !== null,
        leaseExpiresAt: model.lease,
        paused: model.paused,
        recoveryReason: model.recovery,
        outcome: model.outcome,
        errorCode: model.errorCode,
        nextCommand: model.nextCommand,
        originCommand: model.originCommand,
        parentRunId: model.parentRunId,
        restartNumber: model.restartNumber,
        origin: model.session === null ? { kind: "cli" } : { kind: "pi", sessionId: model.session },
        cursor: model.cursor,
        stepCount: model.stepCount,
        presentationState: model.presentation,
        started: model.started,
      },
    );
    same(
      m,
      label,
      `steps of ${run.runId}`,
      store
        .listRunSteps(run.runId)
        .map((s) => `${s.path}#${s.visit}:${s.status}:${s.attempt}`)
        .sort(),
      [...model.steps.entries()].map(([key, s]) => `${key}:${s.status}:${s.attempt}`).sort(),
    );
    same(
      m,
      label,
      `effects of ${run.runId}`,
      store
        .listRunEffects(run.runId)
        .map((e) => `${e.effectId}:${e.status}`)
        .sort(),
      [...m.effects.entries()]
        .filter(([, e]) => e.runId === run.runId)
        .map(([id, e]) => `${id}:${e.status}`)
        .sort(),
    );
    model.revision = run.revision;
  }

  const messages = (
    sql(r, "SELECT message_id, run_id, session_id, status FROM messages ORDER BY message_id").all() as Array<{
      message_id: string;
      run_id: string;
      session_id: string | null;
      status: string;
    }>
  ).map((row) => `${row.message_id}|${row.run_id}|${row.session_id}|${row.status}`);
  same(
    m,
    label,
    "messages",
    messages,
    [...m.messages.entries()].map(([id, msg]) => `${id}|${msg.runId}|${msg.session}|${msg.status}`).sort(),
  );
  const turns = (
    sql(
      r,
      "SELECT session_id, request_id, message_id, run_id, status, end_reason FROM turns",
    ).all() as Array<{
      session_id: string;
      request_id: string;
      message_id: string;
      run_id: string | null;
      status: string;
      end_reason: string | null;
    }>
  )
    .map((t) => `${t.session_id}|${t.request_id}|${t.message_id}|${t.run_id}|${t.status}|${t.end_reason}`)
    .sort();
  same(
    m,
    label,
    "turns",
    turns,
    [...m.turns.values()]
      .map((t) => `${t.session}|${t.requestId}|${t.messageId}|${t.runId}|${t.status}|${t.reason}`)
      .sort(),
  );
  same(
    m,
    label,
    "open launches",
    store
      .listOpenLaunches()
      .map((l) => `${l.launchId}|${l.runId}|${l.generation}`)
      .sort(),
    [...m.launches.entries()]
      .filter(([, l]) => l.decision === null)
      .map(([id, l]) => `${id}|${l.runId}|${l.generation}`)
      .sort(),
  );
}

// ---------------------------------------------------------------------------------------------
// fast-check wiring
// ---------------------------------------------------------------------------------------------

/** Counts what the generated sequences reached, so a vacuous model shows up as a failed test. */
const reached = new Map<string, number>();
const count = (key: string) => reached.set(key, (reached.get(key) ?? 0) + 1);

class OpCommand implements fc.Command<Model, Real> {
  constructor(readonly op: Op) {}

  check(m: Readonly<Model>): boolean {
    // Smart turn reports wait until there is something for them to act on.
    if (this.op.t === "startTurn" && this.op.smart && this.op.request !== 3)
      return m.ownablePrompts().length > 0;
    if (this.op.t === "endTurn" && this.op.smart) return m.openTurns().length > 0;
    if (this.op.t === "exit" && this.op.launch < 3)
      return [...m.launches.values()].some((l) => l.decision === null);
    const targeted = "run" in this.op ? this.op.run : "parent" in this.op ? this.op.parent : undefined;
    if (targeted === undefined || targeted.ghost) return true;
    if (!targeted.smart) return m.order.length > 0;
    const t = this.op.t;
    return [...m.runs.values()].some((run) => useful(m, run, t));
  }

  run(m: Model, r: Real): void {
    const before = snapshot(r.h.store);
    const openBefore = m.openTurns().length;
    const logLength = m.log.length;
    const effect = execute(m, r, this.op);
    checkInvariants(m, r, m.log.slice(logLength).join("; ") || this.toString(), before, effect);
    // Coverage: what each operation (or the one `drive` chose) returned.
    count(`${m.derived || this.op.t}=${m.lastResult || "-"}`);
    if (m.openTurns().length > openBefore) count("turn opened");
    m.derived = "";
    m.lastResult = "";
  }

  toString(): string {
    return `${this.op.t}(${Object.entries(this.op)
      .filter(([k]) => k !== "t")
      .map(([k, v]) => `${k}=${typeof v === "object" ? canon(v) : String(v)}`)
      .join(",")})`;
  }
}

const weighted = <T>(...choices: Array<[number, T]>): fc.Arbitrary<T> =>
  fc.oneof(...choices.map(([weight, value]) => ({ weight, arbitrary: fc.constant(value) })));

const target = fc.record({
  idx: fc.nat({ max: 17 }),
  ghost: weighted<boolean>([30, false], [1, true]),
  smart: weighted<boolean>([9, true], [1, false]),
});
const fenceChoice = weighted<FenceChoice>(
  [16, "current"],
  [2, "stale"],
  [1, "forged"],
  [1, "revOk"],
  [1, "revStale"],
);
const visitChoice = weighted<VisitChoice>([3, "next"], [3, "last"], [1, "skip"]);
const revChoice = weighted<RevChoice>([4, "none"], [1, "ok"], [1, "stale"]);
const small = (max: number) => fc.nat({ max });
const fenced = { run: target, fence: fenceChoice, stale: small(3) };

function cmd<T extends Record<string, fc.Arbitrary<unknown>>>(
  t: Op["t"],
  fields: T,
): fc.Arbitrary<fc.Command<Model, Real>> {
  return fc.record(fields).map((f) => new OpCommand({ t, ...f } as Op));
}

const commandArb = fc.oneof(
  {
    weight: 2,
    arbitrary: cmd("reserve", { id: small(9), origin: small(7), input: small(1), smart: fc.boolean() }),
  },
  { weight: 4, arbitrary: cmd("claim", { run: target, token: small(5), lease: small(1), rev: revChoice }) },
  { weight: 4, arbitrary: cmd("markRunning", fenced) },
  { weight: 6, arbitrary: cmd("startVisit", { ...fenced, path: small(1), visit: visitChoice }) },
  {
    weight: 5,
    arbitrary: cmd("finishVisit", { ...fenced, path: small(1), visit: visitChoice, result: small(3) }),
  },
  {
    weight: 3,
    arbitrary: cmd("advanceVisit", {
      ...fenced,
      path: small(1),
      visit: visitChoice,
      to: small(1),
      output: small(2),
    }),
  },
  {
    weight: 4,
    arbitrary: cmd("reserveEffect", {
      ...fenced,
      path: small(1),
      visit: visitChoice,
      manual: fc.boolean(),
      request: small(1),
    }),
  },
  { weight: 4, arbitrary: cmd("settleEffect", { ...fenced, effect: small(3), result: small(2) }) },
  {
    weight: 5,
    arbitrary: cmd("enqueue", {
      ...fenced,
      path: small(1),
      visit: visitChoice,
      notify: weighted([4, false], [1, true]),
      body: small(1),
    }),
  },
  {
    weight: 3,
    arbitrary: cmd("startTurn", {
      session: small(2),
      request: small(3),
      message: small(5),
      smart: fc.boolean(),
    }),
  },
  {
    weight: 3,
    arbitrary: cmd("endTurn", {
      session: small(2),
      request: small(3),
      reason: small(2),
      smart: weighted([3, true], [1, false]),
    }),
  },
  { weight: 2, arbitrary: cmd("pause", { run: target }) },
  { weight: 2, arbitrary: cmd("park", { ...fenced, reason: small(3) }) },
  { weight: 1, arbitrary: cmd("cancel", { run: target, rev: revChoice }) },
  { weight: 1, arbitrary: cmd("finish", { ...fenced, ending: small(5) }) },
  { weight: 2, arbitrary: cmd("recover", { run: target, advance: small(3) }) },
  { weight: 1, arbitrary: cmd("advance", { advance: small(3) }) },
  { weight: 2, arbitrary: cmd("launch", { ...fenced, launch: small(3) }) },
  { weight: 2, arbitrary: cmd("exit", { launch: small(4), exit: small(3) }) },
  { weight: 2, arbitrary: cmd("restart", { parent: target, child: small(2) }) },
  {
    weight: 2,
    arbitrary: cmd("continue", {
      parent: target,
      child: small(2),
      answer: small(1),
      cursorOk: weighted([4, true], [1, false]),
    }),
  },
  { weight: 1, arbitrary: cmd("invalid", { run: target, which: small(6) }) },
  { weight: 40, arbitrary: cmd("drive", { run: target, variant: small(11) }) },
);

/**
 * Open the harness on tmpfs when the machine has one: a harness per property run would otherwise
 * spend most of the test's time in fsync and unlink on the temp disk. Still a real SQLite file.
 */
function withFastTmpdir<T>(fn: () => T): T {
  const previous = process.env.TMPDIR;
  if (SHM_AVAILABLE) process.env.TMPDIR = "/dev/shm";
  try {
    return fn();
  } finally {
    if (previous === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = previous;
  }
}

const SHM_AVAILABLE = (() => {
  try {
    accessSync("/dev/shm", constants.W_OK);
    return true;
  } catch {
    return false;
  }
})();

const seedArb = fc.array(
  fc
    .record({ id: small(9), origin: small(7), input: small(1), smart: fc.constant(false) })
    .map((f) => new OpCommand({ t: "reserve", ...f })),
  { minLength: 1, maxLength: 3 },
);

/**
 * 200 sequences from a fixed seed by default, so CI is reproducible: with a seed drawn anew each run,
 * a rare state was now and then reached by none of the 200, and the guard below failed CI.
 * PIW_PROPERTY_SEED=$RANDOM PIW_PROPERTY_RUNS=2000 hunts with others; PIW_PROPERTY_STATS=1 prints
 * what the sequences reached. fast-check prints the seed and path of a failure; pass them to fc.assert
 * to replay.
 */
const NUM_RUNS = Number(process.env.PIW_PROPERTY_RUNS ?? 200);
const SEED = Number(process.env.PIW_PROPERTY_SEED ?? 20_261_203);

describe("RunStore against a reference model", () => {
  it("keeps every lifecycle invariant over random operation sequences", () => {
    fc.assert(
      fc.property(seedArb, fc.commands([commandArb], { maxCommands: 40, size: "max" }), (seed, cmds) => {
        // A real state file; NORMAL sync only skips the per-commit fsync, which no invariant depends on.
        const h = withFastTmpdir(() => openHarness({ synchronous: "NORMAL" }));
        const ro = new Database(h.store.file, { readonly: true, fileMustExist: true });
        try {
          const setup = () => {
            const model = new Model(h.clock.now);
            const real: Real = { h, ro, statements: new Map() };
            // A few reservations first, so the commands start with runs to act on.
            for (const command of seed) command.run(model, real);
            return { model, real };
          };
          fc.modelRun(setup, cmds);
        } finally {
          ro.close();
          h.cleanup();
        }
      }),
      { numRuns: NUM_RUNS, seed: SEED },
    );
    if (process.env.PIW_PROPERTY_STATS) console.log(JSON.stringify(Object.fromEntries([...reached].sort())));
    // Guard against a vacuous model: the sequences must reach the deep states, not only refusals.
    if (NUM_RUNS >= 100) {
      for (const key of [
        "markRunning=applied",
        "startVisit=applied",
        "startVisit=recoveryRequired",
        "finishVisit=applied",
        "advanceVisit=applied+applied",
        "advanceVisit=applied+recoveryRequired",
        "advanceVisit=routed:applied+applied",
        "advanceVisit=conflict(visit_not_open)",
        "enqueue=applied",
        "reserveEffect=applied",
        "settleEffect=applied",
        "turn opened",
        "finish=applied",
        "exit=applied",
        "markRunning=conflict(stale_fence)",
      ]) {
        expect(reached.get(key) ?? 0, key).toBeGreaterThan(0);
      }
    }
  });
});
