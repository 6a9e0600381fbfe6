import { isAbsolute, resolve } from "node:path";
import {
  type AddSchedule,
  captureRunEnv,
  catchUpPolicySchema,
  overlapPolicySchema,
  SCHEDULE_MAX_WINDOW_MS,
  type ScheduleTiming,
  scheduleIdSchema,
} from "@piw/protocol";
import type { CliContext } from "../cli-context.js";
import { CliError, usageError } from "../cli-error.js";
import { COMMAND_TABLE } from "../command-table.js";
import { ExitCode } from "../exit-codes.js";
import { scheduleOutput, schedulesOutput } from "../output-schemas.js";
import { parseCommandLine } from "../parse-command-line.js";
import { parseJsonArgument, preflight } from "../preflight.js";
import { renderScheduleList } from "../render-schedules.js";
import { COMMAND_USAGE } from "../usage.js";
import { savedValue } from "./run-arguments.js";

type Values = ReturnType<typeof parseCommandLine<typeof COMMAND_TABLE.schedule.options>>["values"];

const UNITS: Readonly<Record<string, number>> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** `30s`, `30m`, `2h`, `1d`, `500ms`: a duration in milliseconds. */
export function parseDuration(text: string, flag: string): number {
  const match = /^(\d+(?:\.\d+)?)(ms|s|m|h|d)$/.exec(text.trim());
  const unit = match?.[2] === undefined ? undefined : UNITS[match[2]];
  if (match?.[1] === undefined || unit === undefined) {
    throw usageError(`${flag} takes a duration such as 30s, 30m, 2h or 1d`, "schedule");
  }
  return Math.round(Number(match[1]) * unit);
}

/** `piw schedule add|list|pause|resume|trigger|delete`. */
export async function scheduleCommand(ctx: CliContext, args: string[]): Promise<ExitCode> {
  const { values, positionals } = parseCommandLine("schedule", args, COMMAND_TABLE.schedule.options);
  const [action, ...rest] = positionals;
  if (values.help || action === undefined) {
    ctx.print(COMMAND_USAGE.schedule);
    return action === undefined && !values.help ? ExitCode.usage : ExitCode.ok;
  }
  switch (action) {
    case "add":
      return addSchedule(ctx, values, rest);
    case "list":
      return listSchedules(ctx, values, rest);
    case "pause":
    case "resume":
    case "trigger":
    case "delete":
      return changeSchedule(ctx, values, action, rest);
    default:
      throw usageError(
        `unknown schedule command ${JSON.stringify(action)}; use add, list, pause, resume, trigger or delete`,
        "schedule",
      );
  }
}

function timingOf(values: Values): ScheduleTiming {
  if (values.every !== undefined && values.cron !== undefined) {
    throw usageError("give either --every or --cron, not both", "schedule");
  }
  if (values.every !== undefined) {
    if (values.tz !== undefined) throw usageError("--tz goes with --cron", "schedule");
    const everyMs = parseDuration(values.every, "--every");
    if (everyMs < 1000) throw usageError("--every is at least 1s", "schedule");
    return { kind: "every", everyMs };
  }
  if (values.cron !== undefined) {
    return {
      kind: "cron",
      expression: values.cron,
      ...(values.tz === undefined ? {} : { timeZone: values.tz }),
    };
  }
  throw usageError("piw schedule add needs --every <duration> or --cron <expr>", "schedule");
}

function policy<T extends string>(
  schema: { safeParse(v: unknown): { success: true; data: T } | { success: false } },
  raw: string | undefined,
  fallback: T,
  flag: string,
  words: string,
): T {
  if (raw === undefined) return fallback;
  const parsed = schema.safeParse(raw);
  if (!parsed.success) throw usageError(`${flag} is one of ${words}`, "schedule");
  return parsed.data;
}

/** The default name: the workflow's, from its name or file name. */
function defaultName(ref: string): string {
  const base = ref.split("/").pop() ?? ref;
  return base
    .replace(/\.workflow\.ts$/, "")
    .toLowerCase()
    .replace(/[^a-z0-9._-]+/g, "-")
    .replace(/^[^a-z0-9]+/, "")
    .slice(0, 64);
}

async function addSchedule(ctx: CliContext, values: Values, positionals: string[]): Promise<ExitCode> {
  const [ref, ...words] = positionals;
  if (ref === undefined) throw usageError("piw schedule add needs a workflow name or path", "schedule");
  const timing = timingOf(values);
  const scheduleId = values.name ?? defaultName(ref);
  if (!scheduleIdSchema.safeParse(scheduleId).success) {
    throw usageError(
      "--name takes lowercase letters, digits, '.', '_' and '-', starting with a letter or digit",
      "schedule",
    );
  }
  const window =
    values["catch-up-window"] === undefined
      ? 3_600_000
      : parseDuration(values["catch-up-window"], "--catch-up-window");
  const jitter = values.jitter === undefined ? 0 : parseDuration(values.jitter, "--jitter");
  if (window > SCHEDULE_MAX_WINDOW_MS || jitter > SCHEDULE_MAX_WINDOW_MS) {
    throw usageError("--catch-up-window and --jitter are at most 7d", "schedule");
  }
  const untilAt = values.until === undefined ? undefined : Date.parse(values.until);
  if (untilAt !== undefined && (!Number.isFinite(untilAt) || untilAt <= Date.now())) {
    throw usageError("--until takes a time in the future, such as 2027-01-31T18:00:00Z", "schedule");
  }
  // A path is saved absolute: each firing resolves it again, from this folder.
  const workflowRef =
    ref.includes("/") || ref.endsWith(".ts") ? (isAbsolute(ref) ? ref : resolve(ctx.io.cwd, ref)) : ref;
  // The workflow and input are checked now, as piw run would; each firing checks them again.
  await preflight(
    { ref: workflowRef, cwd: ctx.io.cwd, words, inputJson: values["input-json"], agentSteps: true },
    ctx.io.env,
  );
  const env = captureRunEnv(ctx.io.env);
  if (!env.ok) throw new CliError(env.error.message, ExitCode.usage);
  const request: AddSchedule = {
    scheduleId,
    workflowRef,
    workingDir: ctx.io.cwd,
    ...(values["input-json"] === undefined
      ? words.length > 0
        ? { task: words.join(" ") }
        : {}
      : { input: parseJsonArgument(values["input-json"], "--input-json") }),
    env: env.env,
    timing,
    overlap: policy(
      overlapPolicySchema,
      values.overlap,
      "skip",
      "--overlap",
      "skip, buffer-one, cancel-previous or allow",
    ),
    catchUp: policy(catchUpPolicySchema, values["catch-up"], "latest", "--catch-up", "none, latest or all"),
    catchUpWindowMs: window,
    jitterMs: jitter,
    ...(untilAt === undefined ? {} : { untilAt }),
  };
  const host = await ctx.host();
  const schedule = savedValue(await host.call("schedules.add", request), scheduleId);
  if (values.json) ctx.printJson(scheduleOutput(schedule));
  else {
    const next =
      schedule.nextAt === null ? "never (its --until has passed)" : new Date(schedule.nextAt).toISOString();
    ctx.print(`scheduled ${schedule.scheduleId}: next firing ${next}`);
  }
  return ExitCode.ok;
}

async function listSchedules(ctx: CliContext, values: Values, extra: string[]): Promise<ExitCode> {
  if (extra.length > 0) throw usageError(`unexpected argument ${JSON.stringify(extra[0])}`, "schedule");
  const host = await ctx.host();
  const schedules = await host.call("schedules.list", {});
  if (values.json) ctx.printJson(schedulesOutput(schedules));
  else for (const line of renderScheduleList(schedules, ctx.style, Date.now())) ctx.print(line);
  return ExitCode.ok;
}

async function changeSchedule(
  ctx: CliContext,
  values: Values,
  action: "pause" | "resume" | "trigger" | "delete",
  positionals: string[],
): Promise<ExitCode> {
  const [scheduleId, ...extra] = positionals;
  if (scheduleId === undefined) throw usageError(`piw schedule ${action} needs a schedule name`, "schedule");
  if (extra.length > 0) throw usageError(`unexpected argument ${JSON.stringify(extra[0])}`, "schedule");
  if (!scheduleIdSchema.safeParse(scheduleId).success) {
    throw new CliError(`${JSON.stringify(scheduleId)} is not a schedule name`, ExitCode.usage);
  }
  if (values.note !== undefined && action !== "pause") throw usageError("--note goes with pause", "schedule");
  const host = await ctx.host();
  switch (action) {
    case "pause": {
      const note = values.note === undefined ? {} : { note: values.note };
      const schedule = savedValue(await host.call("schedules.pause", { scheduleId, ...note }), scheduleId);
      if (values.json) ctx.printJson(scheduleOutput(schedule));
      else ctx.print(`paused ${scheduleId}; go on with: piw schedule resume ${scheduleId}`);
      return ExitCode.ok;
    }
    case "resume":
    case "delete": {
      const method = action === "resume" ? "schedules.resume" : "schedules.delete";
      const schedule = savedValue(await host.call(method, { scheduleId }), scheduleId);
      if (values.json) ctx.printJson(scheduleOutput(schedule));
      else if (action === "delete") ctx.print(`deleted ${scheduleId}; its runs stay`);
      else
        ctx.print(
          `resumed ${scheduleId}: next firing ${schedule.nextAt === null ? "never" : new Date(schedule.nextAt).toISOString()}`,
        );
      return ExitCode.ok;
    }
    case "trigger": {
      const fired = savedValue(await host.call("schedules.trigger", { scheduleId }), scheduleId);
      if (values.json) ctx.printJson(scheduleOutput(fired.schedule, fired.run));
      else ctx.print(triggered(scheduleId, fired.schedule.lastFiring, fired.run?.runId ?? null));
      return fired.run === null && fired.schedule.lastFiring?.outcome === "failed"
        ? ExitCode.failed
        : ExitCode.ok;
    }
    default:
      return action satisfies never;
  }
}

function triggered(
  scheduleId: string,
  last: { outcome: string; error: { message: string } | null } | null,
  runId: string | null,
): string {
  if (runId !== null) return `triggered ${scheduleId}: run ${runId}`;
  if (last?.error) return `triggered ${scheduleId}: the firing failed: ${last.error.message}`;
  return `triggered ${scheduleId}: ${last?.outcome ?? "nothing fired"} (a run of it is still active)`;
}
