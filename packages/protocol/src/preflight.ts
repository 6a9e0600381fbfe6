import { z } from "zod";
import { jsonValueSchema } from "./ids.js";
import { modelNoticesSchema, reservePreparedRunSchema } from "./run-records.js";
import { errorCodeSchema } from "./safe-error.js";

/**
 * The preflight child's protocol: one request from the CLI or the Pi extension, one reply from the
 * short-lived process that evaluates the workflow file (IPC messages, never its stdout). Workflow code
 * runs only there, so its exit, crash or endless loop becomes a typed refusal instead of ending or
 * hanging the process that speaks for the user.
 */
const requestIdSchema = z.string().min(1).max(100);

export const preflightRequestSchema = z.discriminatedUnion("type", [
  z.object({
    type: z.literal("launch"),
    requestId: requestIdSchema,
    /** A workflow name or a path to a `<name>.workflow.ts` file. */
    ref: z.string().min(1).max(4096),
    cwd: z.string().min(1).max(4096),
    task: z
      .string()
      .max(64 * 1024)
      .optional(),
    input: jsonValueSchema.optional(),
    /** False for a run started without a Pi session (the CLI): agent steps are refused. */
    piSession: z.boolean(),
    /** The entry file of the asking Pi's SDK: the model check of isolated steps loads it. */
    piSdkEntry: z.string().min(1).max(4096).optional(),
    /** The asker's time limit for the whole preflight: the model check gives up well within it. */
    timeoutMs: z.number().int().positive().max(600_000).optional(),
  }),
  /** What a workflow is, for a list of the workflows one can start: nothing is checked or saved. */
  z.object({
    type: z.literal("describe"),
    requestId: requestIdSchema,
    ref: z.string().min(1).max(4096),
    cwd: z.string().min(1).max(4096),
  }),
  /** Every built-in workflow the child has, described: the asker runs no workflow code to list them. */
  z.object({ type: z.literal("builtins"), requestId: requestIdSchema, cwd: z.string().min(1).max(4096) }),
]);
export type PreflightRequest = z.infer<typeof preflightRequestSchema>;

/** What a launch needs from its workflow, as plain data: the `runs.reserve` fields the workflow decides. */
const preflightLaunchSchema = reservePreparedRunSchema
  .omit({ runId: true, origin: true, workingDir: true, notifyModel: true, env: true })
  .extend({
    /** The workflow's `notifyModel`; the caller reserves with it only when the model starts the run. */
    notifyModel: modelNoticesSchema,
    title: z.string().optional(),
    /** Said before the run starts, e.g. that the task was ignored. */
    notes: z.array(z.string()),
    /** Full paths of the agent steps (they run in the Pi session). */
    agentSteps: z.array(z.string().max(4096)),
  });
export type PreflightLaunch = z.infer<typeof preflightLaunchSchema>;

/** A launch that must not be saved, with every reason (one per line). */
export const PREFLIGHT_MAX_PROBLEMS = 200;
export const PREFLIGHT_MAX_TEXT = 4096;

const preflightRefusalSchema = z.object({
  code: errorCodeSchema,
  message: z.string().max(PREFLIGHT_MAX_TEXT),
  problems: z.array(z.string().max(PREFLIGHT_MAX_TEXT)).max(PREFLIGHT_MAX_PROBLEMS),
  /** A usage mistake (wrong input) rather than a broken workflow. */
  usage: z.boolean(),
});
export type PreflightRefusal = z.infer<typeof preflightRefusalSchema>;

/** A workflow as a list shows it: its title and input keys (null: its input is not a plain object). */
const workflowDescriptionSchema = z.object({
  name: z.string().max(PREFLIGHT_MAX_TEXT),
  title: z.string().max(PREFLIGHT_MAX_TEXT).nullable(),
  input: z
    .object({
      keys: z.array(z.string().max(PREFLIGHT_MAX_TEXT)).max(PREFLIGHT_MAX_PROBLEMS),
      required: z.array(z.string().max(PREFLIGHT_MAX_TEXT)).max(PREFLIGHT_MAX_PROBLEMS),
    })
    .nullable(),
  takesInput: z.boolean(),
  /** One line on what the workflow is for. */
  summary: z.string().max(PREFLIGHT_MAX_TEXT).nullable(),
  /** The input field free words go to; null when the workflow takes no input. */
  textInput: z.string().max(PREFLIGHT_MAX_TEXT).nullable(),
  agentSteps: z.array(z.string().max(4096)),
});
export type WorkflowDescription = z.infer<typeof workflowDescriptionSchema>;

/** A file a launch was prepared from, as it was read. */
const preflightSourceSchema = z.object({
  path: z.string().min(1).max(4096),
  sha256: z.string().regex(/^[0-9a-f]{64}$/),
});
export type PreflightSource = z.infer<typeof preflightSourceSchema>;
/** More modules than this and a launch is not worth caching (each is hashed on every reuse). */
export const PREFLIGHT_MAX_SOURCES = 500;

export const preflightReplySchema = z.discriminatedUnion("type", [
  z.object({
    type: z.literal("described"),
    requestId: requestIdSchema,
    workflow: workflowDescriptionSchema,
  }),
  z.object({
    type: z.literal("launch.prepared"),
    requestId: requestIdSchema,
    launch: preflightLaunchSchema,
    /**
     * Every file evaluated to prepare the launch, with the sha256 of the bytes evaluated: while each
     * still hashes the same, the asker may reuse this reply for the same request. Absent: never reuse it.
     */
    sources: z.array(preflightSourceSchema).max(PREFLIGHT_MAX_SOURCES).optional(),
  }),
  z.object({
    type: z.literal("builtins.described"),
    requestId: requestIdSchema,
    workflows: z.array(workflowDescriptionSchema).max(PREFLIGHT_MAX_PROBLEMS),
  }),
  z.object({ type: z.literal("refused"), requestId: requestIdSchema, refusal: preflightRefusalSchema }),
  /** Workflow code threw outside any await of the load (a timer, a stray rejection). */
  z.object({ type: z.literal("crashed"), requestId: requestIdSchema }),
]);
export type PreflightReply = z.infer<typeof preflightReplySchema>;

/** The files a reply's prepared launch may be reused against; undefined for any other reply. */
export function reusablePreflightSources(raw: unknown): PreflightSource[] | undefined {
  const reply = preflightReplySchema.safeParse(raw);
  return reply.success && reply.data.type === "launch.prepared" ? reply.data.sources : undefined;
}
