import { isAbsolute, resolve } from "node:path";
import { captureRunEnv, defaultScheduleName, scheduleIdSchema, scheduleRequest } from "@piw/protocol";
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

async function addSchedule(ctx: CliContext, values: Values, positionals: string[]): Promise<ExitCode> {
  const [ref, ...words] = positionals;
  if (ref === undefined) throw usageError("piw schedule add needs a workflow name or path", "schedule");
  // A path is saved absolute: each firing resolves it again, from this folder.
  const workflowRef =
    ref.includes("/") || ref.endsWith(".ts") ? (isAbsolute(ref) ? ref : resolve(ctx.io.cwd, ref)) : ref;
  const env = captureRunEnv(ctx.io.env);
  if (!env.ok) throw new CliError(env.error.message, ExitCode.usage);
  const checked = scheduleRequest(
    {
      name: values.name ?? defaultScheduleName(ref),
      workflowRef,
      workingDir: ctx.io.cwd,
      task: words.length > 0 ? words.join(" ") : undefined,
      input:
        values["input-json"] === undefined
          ? undefined
          : parseJsonArgument(values["input-json"], "--input-json"),
      env: env.env,
      every: values.every,
      cron: values.cron,
      tz: values.tz,
      overlap: values.overlap,
      catchUp: values["catch-up"],
      catchUpWindow: values["catch-up-window"],
      jitter: values.jitter,
      until: values.until,
    },
    Date.now(),
  );
  // The problem names the option by its flag's word (`every` is --every), as in Pi and the tool.
  if (!checked.ok) throw usageError(checked.problem, "schedule");
  // The workflow and input are checked now, as piw run would; each firing checks them again.
  await preflight(
    { ref: workflowRef, cwd: ctx.io.cwd, words, inputJson: values["input-json"], agentSteps: true },
    ctx.io.env,
  );
  const host = await ctx.host();
  const schedule = savedValue(await host.call("schedules.add", checked.request), checked.request.scheduleId);
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
