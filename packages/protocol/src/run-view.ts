import { z } from "zod";
import { workspaceViewSchema } from "./workspace-view.js";
import { AGENT_ACTIVITY_MAX, agentProgressSchema } from "./agent-progress.js";
import { graphManifestSchema } from "./graph-manifest.js";
import { answeredBySchema } from "./answer-check.js";
import { budgetSchema, budgetSpendSchema } from "./budget.js";
import { jsonValueSchema, nodePathSchema, runIdSchema } from "./ids.js";
import { PROGRESS_MESSAGE_MAX_CHARS } from "./node-progress.js";
import { PASSED_VISITS_MAX } from "./passed-visits.js";
import { oneLineSchema } from "./one-line.js";
import { nodeKindSchema, sourceIdentitySchema } from "./run-records.js";
import { runOriginSchema, runStatusSchema, terminalOutcomeSchema } from "./run-status.js";
import { safeErrorSchema } from "./safe-error.js";
import { recoveryReasonSchema } from "./transition.js";

/**
 * One node as every renderer shows it. `pending` means not visited yet; `cancelled`, `timed_out` and
 * `paused` also name a visit that was under way when its run was cancelled, timed out or paused.
 */
const nodeViewSchema = z.object({
  path: nodePathSchema,
  kind: nodeKindSchema,
  title: z.string(),
  state: z.enum(["pending", "running", "succeeded", "failed", "timed_out", "cancelled", "paused"]),
  visits: z.number().int().min(0),
  attempt: z.number().int().min(0),
  startedAt: z.number().nullable(),
  finishedAt: z.number().nullable(),
  errorCode: z.string().nullable(),
  /** When the latest visit's deadline passes (epoch ms); absent or null when it has none. */
  deadlineAt: z.number().nullable().optional(),
});
export type NodeView = z.infer<typeof nodeViewSchema>;

/**
 * A node visit (or attempt) that ended and that a later visit or attempt of the same path replaced
 * before a view showed its end: a quick failed test before its fix, say, or the iterations of a
 * loop that ran between two views.
 */
const passedVisitSchema = z.object({
  path: nodePathSchema,
  visit: z.number().int().min(1),
  attempt: z.number().int().min(1),
  state: z.enum(["succeeded", "failed", "timed_out"]),
  startedAt: z.number(),
  finishedAt: z.number(),
  errorCode: z.string().nullable(),
});
export type PassedVisit = z.infer<typeof passedVisitSchema>;

/** What a node shows before any visit reached it: pending, with no visit, times or error. */
export const UNVISITED_NODE = {
  state: "pending",
  visits: 0,
  attempt: 0,
  startedAt: null,
  finishedAt: null,
  errorCode: null,
} as const satisfies Partial<NodeView>;

/**
 * What is doing the run's current work. `running` is shown only while an accepted worker or an
 * accepted Pi turn is doing it; a live process alone proves nothing.
 */
const currentWorkSchema = z.discriminatedUnion("kind", [
  z.object({ kind: z.literal("none") }),
  z.object({ kind: z.literal("worker"), launchId: z.string(), path: nodePathSchema.nullable() }),
  z.object({ kind: z.literal("turn"), turnId: z.string(), path: nodePathSchema.nullable() }),
  z.object({ kind: z.literal("waiting_for_model"), path: nodePathSchema }),
  // Lined up for a worker while the host runs its cap of workers: `position` 1 starts next.
  z.object({
    kind: z.literal("waiting_for_worker"),
    position: z.number().int().min(1),
    cap: z.number().int().min(1),
  }),
]);
export type CurrentWork = z.infer<typeof currentWorkSchema>;

/**
 * The checkpoint a waiting run stopped at, as people see it: what it asks, who may answer, and the
 * answer's JSON Schema (null when none was saved or it was too large to show).
 */
const checkpointViewSchema = z.object({
  path: nodePathSchema,
  visit: z.number().int(),
  prompt: z.string(),
  answeredBy: answeredBySchema,
  answerSchema: z.record(z.string(), jsonValueSchema).nullable(),
  /** An approval gate's deadline (epoch ms) and the default the host takes then, as an automatic answer. */
  deadline: z.object({ at: z.number(), answer: jsonValueSchema }).nullable().optional(),
});
export type CheckpointView = z.infer<typeof checkpointViewSchema>;

/** The longest input summary a run-list row carries (characters, ellipsis included). */
export const INPUT_SUMMARY_MAX_CHARS = 120;

/** The largest input or output a view carries (canonical JSON bytes); a larger one is only sized. */
export const VIEW_VALUE_MAX_BYTES = 16 * 1024;

/**
 * A run's input or final output in a view: the JSON itself, its size when it is too large, or (an
 * input only) `cleared` when the launch ended before it ran and the input was not kept.
 */
const viewValueSchema = z.discriminatedUnion("kind", [
  z.object({ kind: z.literal("json"), value: jsonValueSchema }),
  z.object({ kind: z.literal("omitted"), bytes: z.number().int().min(0) }),
  z.object({ kind: z.literal("cleared") }),
]);

/** The input summary of a run whose input was cleared: unquoted, so no JSON string input reads the same. */
export const INPUT_CLEARED_SUMMARY = "(input cleared)";
export type ViewValue = z.infer<typeof viewValueSchema>;

/** Which open Pi turn must be aborted, and why (one bounded sentence the user may see). */
const turnAbortSchema = z.object({
  turnId: z.string(),
  requestId: z.string(),
  reason: z.string().max(500),
});
export type TurnAbort = z.infer<typeof turnAbortSchema>;

/** The latest progress a running node visit reported, and the ETA the host derived from it. */
const nodeProgressSchema = z.object({
  path: nodePathSchema,
  visit: z.number().int().min(1),
  done: z.number().min(0).nullable(),
  total: z.number().min(0).nullable(),
  message: oneLineSchema(PROGRESS_MESSAGE_MAX_CHARS).nullable(),
  updatedAt: z.number(),
  eta: z.object({ at: z.number(), confidence: z.enum(["low", "medium", "high"]) }).nullable(),
});
export type NodeProgress = z.infer<typeof nodeProgressSchema>;

/** The host's one view of a run: the widget, the footer and `piw` all render exactly this. */
export const runViewSchema = z.object({
  runId: runIdSchema,
  workflowName: z.string(),
  /** Where the definition came from, so a client can check an answer before anything is saved. */
  source: sourceIdentitySchema,
  title: z.string().nullable(),
  status: runStatusSchema,
  outcome: terminalOutcomeSchema.nullable(),
  origin: runOriginSchema,
  parentRunId: runIdSchema.nullable(),
  rootRunId: runIdSchema,
  originCommand: z.enum(["start", "continue", "restart"]),
  restartNumber: z.number().int(),
  paused: z.boolean(),
  recoveryReason: recoveryReasonSchema.nullable(),
  error: safeErrorSchema.nullable(),
  revision: z.number().int(),
  createdAt: z.number(),
  startedAt: z.number().nullable(),
  finishedAt: z.number().nullable(),
  currentWork: currentWorkSchema,
  cursor: z.object({ path: nodePathSchema, visit: z.number().int() }).nullable(),
  /** The continuation run an answered checkpoint started; absent or null when there is none. */
  continuedAs: runIdSchema.nullable().optional(),
  /** The run's budget (null: none); absent in views built without it. */
  budget: budgetSchema.nullable().optional(),
  /** What the run has spent so far, from its saved agent steps and turns; absent in views built without it. */
  spend: budgetSpendSchema.optional(),
  /** The run's input on one line, cut to INPUT_SUMMARY_MAX_CHARS; absent in views built without it. */
  inputSummary: oneLineSchema(INPUT_SUMMARY_MAX_CHARS).optional(),
  /** The run's input (bounded); absent in views built without it. */
  input: viewValueSchema.optional(),
  /** The completed run's final output (bounded); null while it has none. */
  output: viewValueSchema.nullable().optional(),
  nodes: z.array(nodeViewSchema),
  /**
   * The node visits that ended since the host's previous view of this run and that `nodes` no longer
   * shows, because a later visit or attempt of the same path replaced them; oldest first, absent when
   * none. A follower prints every visit's end from `nodes` and these, however the views are spaced.
   */
  passed: z.array(passedVisitSchema).max(PASSED_VISITS_MAX).optional(),
  /** How many older passed visits were left out when more than PASSED_VISITS_MAX ended between two views. */
  passedOmitted: z.number().int().min(1).optional(),
  manifest: graphManifestSchema,
  /**
   * The latest progress of the run's isolated agent step this host has seen (a tool call, the
   * accepted output): live only, kept in the host's memory, absent when it has none.
   */
  agentProgress: agentProgressSchema.optional(),
  /**
   * What each isolated agent step running now is doing: the latest fact of every open agent visit
   * (parallel branches run several at once), each naming its own path and visit, oldest first;
   * absent when none is running. It sits beside `agentProgress` rather than replacing it, so a
   * reader that knows only `agentProgress` keeps reading the latest fact of the run unchanged.
   */
  agentActivity: z.array(agentProgressSchema).max(AGENT_ACTIVITY_MAX).optional(),
  /**
   * Grows with each live transcript a running agent step of the run reported (its streamed text and
   * tool calls, held in the host's memory): a viewer showing that step's conversation reads it again.
   * Absent while nothing was reported.
   */
  liveConversation: z.number().int().min(1).optional(),
  /** One entry per running node visit that reported progress; absent when none did. */
  progress: z.array(nodeProgressSchema).optional(),
  /**
   * The run's latest run-wide progress (`ctx.progress` with `scope: "run"`): kept after the visit
   * that reported it ended and while the run is parked, gone when the run ends; absent when none.
   * Its `eta` is the author's own, when given.
   */
  runProgress: nodeProgressSchema.optional(),
  /** Set while the run waits at a checkpoint; absent or null otherwise. */
  checkpoint: checkpointViewSchema.nullable().optional(),
  /** The git workspaces the run (or the run it continues) prepared; absent when none. */
  workspaces: z.array(workspaceViewSchema).max(20).optional(),

  /**
   * The host's decision that the Pi turn of this run's step must stop now (its deadline passed, the
   * run was cancelled or paused, or its claim was lost): the session whose turn has `requestId`
   * aborts it. Absent while no open turn of the run needs stopping.
   */
  abortTurn: turnAbortSchema.nullable().optional(),
});
export type RunView = z.infer<typeof runViewSchema>;

/** A row of the run list: the view without the graph. */
export const runSummarySchema = runViewSchema.omit({
  nodes: true,
  passed: true,
  passedOmitted: true,
  manifest: true,
  checkpoint: true,
  abortTurn: true,
  input: true,
  output: true,
});
export type RunSummary = z.infer<typeof runSummarySchema>;
