/**
 * What every `piw <command> --json` prints: one zod schema per output, each object tagged with its
 * `schema` version. A version changes only when a field changes meaning or goes away; new fields may
 * be added within one. docs/cli.md lists these versions.
 */
import {
  type ClientResult,
  clientMethods,
  lazyTable,
  runIdSchema,
  runSummarySchema,
  runViewSchema,
  type RunSummary,
  type RunView,
  type ScheduleRecord,
  scheduleRecordSchema,
} from "@piw/protocol";
import { z } from "zod";
import { OUTPUT_SCHEMA_VERSIONS, type OutputName } from "./output-schema-versions.js";

const tag = <K extends OutputName>(name: K) => z.literal(OUTPUT_SCHEMA_VERSIONS[name]);

/**
 * A command that starts or resumes a run and follows it: the run it acts on, the run it came from,
 * and once followed to its end, its state word, exit code and last view. Detached: `view` is null.
 */
const followedFields = {
  runId: runIdSchema,
  fromRunId: runIdSchema.nullable(),
  detached: z.boolean(),
  state: z.string().nullable(),
  exitCode: z.number().int(),
  view: runViewSchema.nullable(),
};

const controlFields = { runId: runIdSchema, run: runSummarySchema };

const workflowSchema = z.object({
  name: z.string(),
  title: z.string().nullable(),
  /** Where the name finds it: the project's `.pi/workflows/`, the agent folder's, or the built-ins. */
  source: z.object({ kind: z.enum(["project", "global", "builtin"]), path: z.string().nullable() }),
  /** The input's top-level keys, and which of them are required; null when it is not a plain object. */
  input: z.object({ keys: z.array(z.string()), required: z.array(z.string()) }).nullable(),
  /** Whether it takes input at all; null when it cannot be loaded. */
  takesInput: z.boolean().nullable(),
  /** One line on what it is for; null when it says nothing (or cannot be loaded). */
  summary: z.string().nullable(),
  /** The input field that free words (`piw run <name> <words>`) go to; null when it takes none. */
  textInput: z.string().nullable(),
  /** Agent steps need a Pi session: such a workflow starts from Pi, not from `piw run`. */
  agentSteps: z.array(z.string()),
  /** Why a workflow file that was found cannot be started (it does not compile); null when it can. */
  problem: z.string().nullable(),
});

/** Built on first use (see `lazyTable`): a command builds only the schemas it reads. */
export const OUTPUT_SCHEMAS = lazyTable({
  run: () => z.object({ schema: tag("run"), ...followedFields }),
  answer: () => z.object({ schema: tag("answer"), ...followedFields }),
  restart: () => z.object({ schema: tag("restart"), ...followedFields }),
  resume: () => z.object({ schema: tag("resume"), ...followedFields }),
  cancel: () => z.object({ schema: tag("cancel"), ...controlFields }),
  pause: () => z.object({ schema: tag("pause"), ...controlFields }),
  list: () => z.object({ schema: tag("list"), runs: z.array(runSummarySchema) }),
  status: () => runViewSchema.extend({ schema: tag("status") }),
  workflows: () => z.object({ schema: tag("workflows"), workflows: z.array(workflowSchema) }),
  /** `piw view <run> --json`: the run's view; `piw view --json`: the run list. */
  view: () =>
    z.union([
      runViewSchema.extend({ schema: tag("view") }),
      z.object({ schema: tag("view"), runs: z.array(runSummarySchema) }),
    ]),
  /** `piw host status --json`: the running host's status, or where no host runs. */
  host: () =>
    z.union([
      clientMethods["host.status"].result.extend({ schema: tag("host"), running: z.literal(true) }),
      z.object({ schema: tag("host"), running: z.literal(false), stateDir: z.string() }),
    ]),
  /** `piw herdr sync --json`: what was done to the Herdr plugin, and where it now points. */
  herdr: () =>
    z.object({
      schema: tag("herdr"),
      action: z.enum(["linked", "relinked", "enabled", "unchanged"]),
      pluginId: z.string(),
      version: z.string(),
      root: z.string(),
      /** Where Herdr had the plugin before a relink; null otherwise. */
      previousRoot: z.string().nullable(),
      enabled: z.literal(true),
    }),
  /** `piw schedule add|pause|resume|trigger|delete --json`: the schedule, and a triggered run. */
  schedule: () =>
    z.object({ schema: tag("schedule"), schedule: scheduleRecordSchema, run: runSummarySchema.nullable() }),
  schedules: () => z.object({ schema: tag("schedules"), schedules: z.array(scheduleRecordSchema) }),
  error: () =>
    z.object({
      schema: tag("error"),
      exitCode: z.number().int(),
      error: z.object({ message: z.string(), details: z.array(z.string()) }),
    }),
} satisfies { [K in OutputName]: () => z.ZodType });

export type Output<K extends OutputName> = z.infer<(typeof OUTPUT_SCHEMAS)[K]>;
export type FollowedCommand = "run" | "answer" | "restart" | "resume";
export type WorkflowEntry = z.infer<typeof workflowSchema>;

export function followedOutput<K extends FollowedCommand>(
  name: K,
  fields: Omit<Output<K>, "schema">,
): Output<FollowedCommand> {
  return { schema: OUTPUT_SCHEMA_VERSIONS[name], ...fields } as Output<FollowedCommand>;
}

export function controlOutput(
  name: "cancel" | "pause",
  runId: string,
  run: RunSummary,
): Output<"cancel" | "pause"> {
  return { schema: OUTPUT_SCHEMA_VERSIONS[name], runId, run } as Output<"cancel" | "pause">;
}

export function listOutput(runs: RunSummary[]): Output<"list"> {
  return { schema: OUTPUT_SCHEMA_VERSIONS.list, runs };
}

export function statusOutput(view: RunView): Output<"status"> {
  return { schema: OUTPUT_SCHEMA_VERSIONS.status, ...view };
}

export function viewOutput(of: RunView | RunSummary[]): Output<"view"> {
  const schema = OUTPUT_SCHEMA_VERSIONS.view;
  return Array.isArray(of) ? { schema, runs: of } : { schema, ...of };
}

export function hostStatusOutput(
  of: { running: true; status: ClientResult<"host.status"> } | { running: false; stateDir: string },
): Output<"host"> {
  const schema = OUTPUT_SCHEMA_VERSIONS.host;
  return of.running
    ? { schema, running: true, ...of.status }
    : { schema, running: false, stateDir: of.stateDir };
}

export function workflowsOutput(workflows: WorkflowEntry[]): Output<"workflows"> {
  return { schema: OUTPUT_SCHEMA_VERSIONS.workflows, workflows };
}

export function herdrSyncOutput(fields: Omit<Output<"herdr">, "schema">): Output<"herdr"> {
  return { schema: OUTPUT_SCHEMA_VERSIONS.herdr, ...fields };
}

export function errorOutput(exitCode: number, message: string, details: readonly string[]): Output<"error"> {
  return { schema: OUTPUT_SCHEMA_VERSIONS.error, exitCode, error: { message, details: [...details] } };
}

export function scheduleOutput(schedule: ScheduleRecord, run: RunSummary | null = null): Output<"schedule"> {
  return { schema: OUTPUT_SCHEMA_VERSIONS.schedule, schedule, run };
}

export function schedulesOutput(schedules: ScheduleRecord[]): Output<"schedules"> {
  return { schema: OUTPUT_SCHEMA_VERSIONS.schedules, schedules };
}
