import {
  type AgentProgress,
  boundSafeMessage,
  type CheckpointView,
  type CurrentWork,
  type GraphManifest,
  type JsonValue,
  graphManifestSchema,
  INPUT_CLEARED_SUMMARY,
  instantiateMapBranches,
  MAP_ITEMS_EFFECT,
  MAP_LIST_ERROR_CODES,
  type NodeView,
  nodeKindSchema,
  type RunRecord,
  type RunSummary,
  type RunView,
  type SafeError,
  type SavedMapList,
  safeErrorSchema,
  stoppedVisitState,
  runOutcome,
  isEndedRun,
  UNVISITED_NODE,
  VIEW_VALUE_MAX_BYTES,
  type ViewValue,
  WORKSPACE_EFFECT,
  NO_SPEND,
} from "@piw/protocol";
import type { RunInput, RunReader, StepRecord } from "@piw/store";
import type { PassedVisits } from "./passed-visits.js";
import { summarizeInput } from "./input-summary.js";
import { nodeProgressOf, runProgressOf } from "./node-progress-view.js";
import type { LiveVisitTranscript } from "./live-transcripts.js";
import { turnToAbort } from "./turn-abort.js";

/** What the view needs to know about live workers: only an accepted worker of the current claim counts. */
export interface LiveWorkerIndex {
  acceptedWorker(runId: string, generation: number): { launchId: string } | undefined;
  /** Where the run stands in the line for a worker slot, when the host's cap of workers is running. */
  slotWait?(runId: string): { position: number; cap: number } | undefined;
  /** The latest isolated agent step progress a worker of the run reported, if any. */
  agentProgress?(runId: string): AgentProgress | undefined;
  /** The latest fact of each open isolated agent visit of the run, oldest first. */
  agentActivity?(runId: string): AgentProgress[];
  /** The latest facts of one open isolated agent visit, oldest first. */
  agentFacts?(runId: string, path: string, visit: number): AgentProgress[];
  /** The live transcript of one open agent visit, and the attempt it belongs to. */
  liveTranscript?(runId: string, path: string, visit: number): LiveVisitTranscript | undefined;
  /** How many live transcripts the run's agent steps reported: the view carries it. */
  liveSeq?(runId: string): number;
}

export type ViewReader = Pick<
  RunReader,
  | "getRun"
  | "readRunManifest"
  | "listRunSteps"
  | "listNodeProgress"
  | "readRunProgress"
  | "listEffectListLengths"
  | "listRunWorkspaces"
  | "readRunError"
  | "readRunInput"
  | "readRunFinalOutput"
  | "findContinuation"
  | "listOpenTurns"
  | "readAnswerCheck"
  | "latestSettledTurn"
  | "readBudgetState"
>;

/** The checkpoint a waiting run stopped at, with who may answer it and the answer's schema. */
function checkpointOf(reader: ViewReader, run: RunRecord): CheckpointView | null {
  if (runOutcome(run) !== "waiting") return null;
  const saved = reader.readAnswerCheck(run.runId);
  if (!saved) return null;
  const { path, visit, prompt, answeredBy, answerSchema, timeout } = saved;
  return {
    path,
    visit,
    prompt,
    answeredBy,
    answerSchema,
    ...(timeout === null ? {} : { deadline: timeout }),
  };
}

/**
 * Manifests already checked, by the store's shared (frozen) manifest value: a view is built many times
 * a second while a run moves, and checking a 1,000-node manifest costs more than the rest of the view.
 */
const checkedManifests = new WeakMap<object, GraphManifest>();

function manifestOf(reader: ViewReader, run: RunRecord): GraphManifest {
  const saved = reader.readRunManifest(run.runId);
  const key = typeof saved === "object" && saved !== null ? saved : undefined;
  const checked = key === undefined ? undefined : checkedManifests.get(key);
  if (checked !== undefined) return checked;
  const parsed = graphManifestSchema.safeParse(saved);
  if (parsed.success) {
    // Only a value the reader promises never changes (frozen) is a key; every view then shares the result.
    if (key !== undefined && Object.isFrozen(key)) checkedManifests.set(key, parsed.data);
    return parsed.data;
  }
  // The host validates manifests at reserve; a run saved by another writer still gets a view.
  return {
    version: 1,
    workflow: run.workflowName,
    startPath: run.cursor?.path ?? "start",
    exits: [],
    maxSteps: 1,
    nodes: [],
    mounts: [],
    edges: [],
  };
}

function errorOf(reader: ViewReader, run: RunRecord): SafeError | null {
  const saved = reader.readRunError(run.runId);
  if (saved === null) return null;
  const parsed = safeErrorSchema.safeParse(saved);
  return parsed.success ? parsed.data : { code: "internal_error", message: boundSafeMessage(saved.message) };
}

/** A run's input or output as the view carries it: the JSON when it is small enough, else its size. */
function viewValue(value: JsonValue): ViewValue {
  const bytes = Buffer.byteLength(JSON.stringify(value));
  return bytes <= VIEW_VALUE_MAX_BYTES ? { kind: "json", value } : { kind: "omitted", bytes };
}

function nullableViewValue(value: JsonValue | null): ViewValue | null {
  return value === null ? null : viewValue(value);
}

/** A cleared input says so in every view; it is never shown as a blank or an empty value. */
function inputViewValue(input: RunInput): ViewValue {
  return input.kind === "cleared" ? { kind: "cleared" } : viewValue(input.value);
}

function inputSummaryOf(input: RunInput): string {
  return input.kind === "cleared" ? INPUT_CLEARED_SUMMARY : summarizeInput(input.value);
}

/**
 * What a visit under way shows once nobody works on it: the history's rule for a stopped run, and
 * pending for an active run with no worker or turn on it.
 */
function interruptedState(run: RunRecord): NodeView["state"] {
  return stoppedVisitState(run) ?? "pending";
}

/** The path of the visit that is open right now, if any. */
function openPath(steps: StepRecord[]): string | null {
  for (let i = steps.length - 1; i >= 0; i -= 1) {
    const step = steps[i];
    if (step?.status === "running") return step.path;
  }
  return null;
}

/**
 * `running` is shown only while an accepted worker of this claim or an accepted Pi turn is doing the
 * work; a run whose worker is gone shows no current work, whatever its status says.
 */
function currentWorkOf(
  reader: ViewReader,
  run: RunRecord,
  workers: LiveWorkerIndex,
  steps: () => StepRecord[],
): CurrentWork {
  if (run.status === "queued" || run.status === "parked") {
    const wait = workers.slotWait?.(run.runId);
    return wait === undefined ? { kind: "none" } : { kind: "waiting_for_worker", ...wait };
  }
  if (run.status !== "starting" && run.status !== "running") return { kind: "none" };
  const worker = workers.acceptedWorker(run.runId, run.generation);
  if (worker) return { kind: "worker", launchId: worker.launchId, path: openPath(steps()) ?? null };
  if (run.status !== "running") return { kind: "none" };
  const turn = reader.listOpenTurns(run.runId)[0];
  return turn ? { kind: "turn", turnId: turn.turnId, path: turn.path } : { kind: "none" };
}

function summaryOf(
  reader: ViewReader,
  run: RunRecord,
  title: string | null,
  error: SafeError | null,
  work: CurrentWork,
  input: RunInput,
): RunSummary {
  const outcome = runOutcome(run);
  return {
    runId: run.runId,
    workflowName: run.workflowName,
    source: run.source,
    title,
    status: run.status,
    outcome,
    origin: run.origin,
    parentRunId: run.parentRunId,
    rootRunId: run.rootRunId,
    originCommand: run.originCommand,
    restartNumber: run.restartNumber,
    paused: run.paused,
    recoveryReason: run.status === "parked" ? run.recoveryReason : null,
    error,
    revision: run.revision,
    createdAt: run.createdAt,
    startedAt: run.startedAt,
    finishedAt: isEndedRun(run) ? run.finishedAt : null,
    currentWork: work,
    cursor: run.cursor,
    inputSummary: inputSummaryOf(input),
    budget: run.budget ?? null,
    spend: reader.readBudgetState(run.runId)?.spend ?? NO_SPEND,
    continuedAs: outcome === "waiting" ? reader.findContinuation(run.runId) : null,
  };
}

/** The latest saved visit of each path (its latest attempt). */
function latestVisits(steps: StepRecord[]): Map<string, StepRecord> {
  const latest = new Map<string, StepRecord>();
  for (const step of steps) {
    const seen = latest.get(step.path);
    if (!seen || step.visit > seen.visit || (step.visit === seen.visit && step.attempt >= seen.attempt)) {
      latest.set(step.path, step);
    }
  }
  return latest;
}

/**
 * The saved list of each map path's latest visit, open or finished, so the view lists its items
 * before they start. A visit whose list was refused ran no branch and lists none; one query a run.
 */
function savedMapListsOf(
  reader: ViewReader,
  runId: string,
  manifest: GraphManifest,
  latest: Map<string, StepRecord>,
): SavedMapList[] {
  if (!(manifest.forks ?? []).some((fork) => fork.map)) return [];
  return reader.listEffectListLengths(runId, MAP_ITEMS_EFFECT).flatMap(({ path, visit, length }) => {
    const step = latest.get(path);
    if (step?.visit !== visit) return [];
    const refused = step.status === "failed" && MAP_LIST_ERROR_CODES.has(step.errorCode ?? "");
    return refused ? [] : [{ path, items: length }];
  });
}

/** One node per manifest node, merged with the latest saved visit of its path. */
function nodesOf(
  manifest: GraphManifest,
  steps: StepRecord[],
  latest: Map<string, StepRecord>,
  active: boolean,
  interrupted: NodeView["state"],
): NodeView[] {
  const visits = new Map<string, Set<number>>();
  for (const step of steps) {
    const set = visits.get(step.path) ?? new Set<number>();
    set.add(step.visit);
    visits.set(step.path, set);
  }
  const view = (path: string, kind: NodeView["kind"], title: string): NodeView => {
    const step = latest.get(path);
    if (!step) {
      return { path, kind, title, ...UNVISITED_NODE };
    }
    // An open visit with nobody working on it is interrupted, not running.
    const state = step.status === "running" && !active ? interrupted : step.status;
    return {
      path,
      kind,
      title,
      state,
      visits: visits.get(path)?.size ?? 0,
      attempt: step.attempt,
      startedAt: step.startedAt,
      finishedAt: step.finishedAt,
      errorCode: step.errorCode,
      deadlineAt: step.deadlineAt,
    };
  };
  const nodes = manifest.nodes.map((node) => view(node.path, node.kind, node.title));
  const known = new Set(manifest.nodes.map((n) => n.path));
  for (const path of latest.keys()) {
    if (known.has(path)) continue;
    const kind = nodeKindSchema.safeParse(latest.get(path)?.nodeKind);
    nodes.push(view(path, kind.success ? kind.data : "compute", path));
  }
  return nodes;
}

/** Where the run's workspaces are: piw never removes them, so a finished or cancelled run still shows them. */
function workspacesOf(reader: ViewReader, runId: string): Pick<RunView, "workspaces"> {
  const workspaces = reader.listRunWorkspaces(runId, WORKSPACE_EFFECT);
  return workspaces.length === 0 ? {} : { workspaces };
}

/**
 * The host's one view of a run, or null for an unknown run ID. Given the run's `PassedVisits`, the
 * view also names the visits that ended since the last view built with it (the publisher's).
 */
export function buildRunView(
  reader: ViewReader,
  runId: string,
  workers: LiveWorkerIndex,
  passedVisits?: PassedVisits,
): RunView | null {
  const run = reader.getRun(runId);
  if (!run) return null;
  const steps = reader.listRunSteps(runId);
  const latest = latestVisits(steps);
  // A map node's branches come from its saved lists and its visits: every item, started or not.
  const saved = manifestOf(reader, run);
  const manifest = instantiateMapBranches(
    saved,
    steps.map((s) => s.path),
    savedMapListsOf(reader, runId, saved, latest),
  );
  const work = currentWorkOf(reader, run, workers, () => steps);
  const input = reader.readRunInput(runId);
  const nodes = nodesOf(manifest, steps, latest, work.kind !== "none", interruptedState(run));
  return {
    ...summaryOf(reader, run, manifest.title ?? null, errorOf(reader, run), work, input),
    input: inputViewValue(input),
    output: runOutcome(run) === "completed" ? nullableViewValue(reader.readRunFinalOutput(runId)) : null,
    nodes,
    ...passedVisits?.take(steps, latest),
    manifest,
    checkpoint: checkpointOf(reader, run),
    ...workspacesOf(reader, runId),
    abortTurn: run.origin.kind === "pi" ? turnToAbort(reader, run, steps) : null,
    ...progressOf(workers, runId, steps),
    ...nodeProgressOf(run, () => reader.listNodeProgress(runId), { manifest, nodes }),
    ...runProgressOf(run, () => reader.readRunProgress(runId)),
  };
}

/**
 * The run's latest agent fact, and each running agent visit's own: only visits the store still has
 * running, so a view never names an activity whose visit has ended.
 */
function progressOf(
  workers: LiveWorkerIndex,
  runId: string,
  steps: StepRecord[],
): Pick<RunView, "agentProgress" | "agentActivity" | "liveConversation"> {
  const agentProgress = workers.agentProgress?.(runId);
  const liveConversation = workers.liveSeq?.(runId) ?? 0;
  const running = new Set(steps.filter((s) => s.status === "running").map((s) => `${s.path}#${s.visit}`));
  const agentActivity = (workers.agentActivity?.(runId) ?? []).filter((p) =>
    running.has(`${p.path}#${p.visit}`),
  );
  return {
    ...(agentProgress === undefined ? {} : { agentProgress }),
    ...(agentActivity.length === 0 ? {} : { agentActivity }),
    ...(liveConversation === 0 ? {} : { liveConversation }),
  };
}

/** A run-list row: the view without the graph, built without reading every step. */
export function buildRunSummary(reader: ViewReader, run: RunRecord, workers: LiveWorkerIndex): RunSummary {
  const manifest = reader.readRunManifest(run.runId);
  const title =
    typeof manifest === "object" &&
    manifest !== null &&
    !Array.isArray(manifest) &&
    typeof manifest.title === "string"
      ? manifest.title
      : null;
  const work = currentWorkOf(reader, run, workers, () => reader.listRunSteps(run.runId));
  return {
    ...summaryOf(reader, run, title, errorOf(reader, run), work, reader.readRunInput(run.runId)),
    // Read for live runs only: a finished run keeps no progress.
    ...runProgressOf(run, () => reader.readRunProgress(run.runId)),
  };
}
