import { LaunchRefused, type PreflightOptions, preflightLaunch } from "@piw/engine";
import {
  captureRunEnv,
  defaultScheduleName,
  type JsonValue,
  type ScheduleRecord,
  scheduleRequest,
} from "@piw/protocol";
import { z } from "zod";
import { savedOrThrow, WorkflowError } from "./host-link.js";
import type { SessionBridge } from "./session-bridge.js";

export const SCHEDULE_OPS = ["add", "list", "pause", "resume", "trigger", "delete"] as const;

/** The `schedule` action's arguments (one flat object, like every action of the tool). */
export const scheduleActionSchema = z.object({
  action: z.literal("schedule"),
  op: z.enum(SCHEDULE_OPS),
  name: z.string().min(1).max(64).optional(),
  workflow: z.string().min(1).max(1000).optional(),
  task: z
    .string()
    .max(64 * 1024)
    .optional(),
  input: z.unknown().optional(),
  every: z.string().max(40).optional(),
  cron: z.string().max(200).optional(),
  tz: z.string().max(100).optional(),
  overlap: z.string().max(40).optional(),
  catchUp: z.string().max(40).optional(),
  catchUpWindow: z.string().max(40).optional(),
  jitter: z.string().max(40).optional(),
  until: z.string().max(100).optional(),
  note: z.string().max(512).optional(),
});
export type ScheduleAction = z.infer<typeof scheduleActionSchema>;

interface ScheduleResult {
  text: string;
  details: { action: "schedule"; op: ScheduleAction["op"]; [key: string]: unknown };
}

function when(at: number | null): string {
  return at === null ? "never" : new Date(at).toISOString();
}

function describeSchedule(schedule: ScheduleRecord): string {
  const timing =
    schedule.timing.kind === "every"
      ? `every ${schedule.timing.everyMs / 1000}s`
      : `cron "${schedule.timing.expression}"${schedule.timing.timeZone ? ` ${schedule.timing.timeZone}` : ""}`;
  const state = schedule.paused
    ? `paused${schedule.pauseNote === null ? "" : ` (${schedule.pauseNote})`}`
    : `next ${when(schedule.nextAt)}`;
  const last = schedule.lastFiring;
  const lastText =
    last === null
      ? ""
      : `; last firing ${last.outcome}${last.runId ? ` as run ${last.runId} (${last.runOutcome ?? last.runStatus ?? "gone"})` : ""}${last.error ? `: ${last.error.message}` : ""}`;
  return `- ${schedule.scheduleId}: ${schedule.workflowRef}, ${timing}, ${state}${lastText}`;
}

/**
 * Schedules from Pi (the tool's `schedule` action and `/workflow schedule …`). A schedule belongs to
 * the user, not this session: its runs are not this session's and run headless (isolated agent steps).
 */
export async function scheduleAction(
  bridge: SessionBridge,
  action: ScheduleAction,
  cwd: string,
  preflight: PreflightOptions | undefined,
): Promise<ScheduleResult> {
  const { op } = action;
  if (op === "list") {
    const schedules = await bridge.host.call("schedules.list", {});
    return {
      text:
        schedules.length === 0
          ? "No schedules."
          : ["Schedules:", ...schedules.map(describeSchedule)].join("\n"),
      details: { action: "schedule", op, schedules: schedules.map((s) => s.scheduleId) },
    };
  }
  if (op === "add") return addSchedule(bridge, action, cwd, preflight);
  const scheduleId = action.name;
  if (scheduleId === undefined)
    throw new WorkflowError(`schedule ${op} needs the schedule's name (list shows them).`);
  switch (op) {
    case "pause": {
      const note = action.note === undefined ? {} : { note: action.note };
      savedOrThrow(
        await bridge.host.call("schedules.pause", { scheduleId, ...note }),
        `Schedule ${scheduleId}`,
      );
      return { text: `Schedule ${scheduleId} paused.`, details: { action: "schedule", op, scheduleId } };
    }
    case "resume": {
      const schedule = savedOrThrow(
        await bridge.host.call("schedules.resume", { scheduleId }),
        `Schedule ${scheduleId}`,
      );
      return {
        text: `Schedule ${scheduleId} resumed; next firing ${when(schedule.nextAt)}.`,
        details: { action: "schedule", op, scheduleId },
      };
    }
    case "delete":
      savedOrThrow(await bridge.host.call("schedules.delete", { scheduleId }), `Schedule ${scheduleId}`);
      return {
        text: `Schedule ${scheduleId} deleted; its runs stay.`,
        details: { action: "schedule", op, scheduleId },
      };
    case "trigger": {
      const fired = savedOrThrow(
        await bridge.host.call("schedules.trigger", { scheduleId }),
        `Schedule ${scheduleId}`,
      );
      const runId = fired.run?.runId ?? null;
      const last = fired.schedule.lastFiring;
      const text =
        runId !== null
          ? `Schedule ${scheduleId} fired: run ${runId}.`
          : `Schedule ${scheduleId} fired without a run: ${(last?.error?.message ?? last?.outcome ?? "nothing").replace(/\.$/, "")}.`;
      return { text, details: { action: "schedule", op, scheduleId, runId } };
    }
    default:
      return op satisfies never;
  }
}

async function addSchedule(
  bridge: SessionBridge,
  action: ScheduleAction,
  cwd: string,
  preflight: PreflightOptions | undefined,
): Promise<ScheduleResult> {
  const workflow = action.workflow;
  if (workflow === undefined)
    throw new WorkflowError("schedule add needs the workflow (a name or a .workflow.ts path).");
  if (preflight === undefined) throw new WorkflowError("piw cannot load workflows here: reinstall piw.");
  const env = captureRunEnv(process.env);
  if (!env.ok) throw new WorkflowError(`Schedule not added: ${env.error.message}`);
  const input = action.input as JsonValue | undefined;
  const checked = scheduleRequest(
    {
      name: action.name ?? defaultScheduleName(workflow),
      workflowRef: workflow,
      workingDir: cwd,
      task: action.task,
      input,
      env: env.env,
      every: action.every,
      cron: action.cron,
      tz: action.tz,
      overlap: action.overlap,
      catchUp: action.catchUp,
      catchUpWindow: action.catchUpWindow,
      jitter: action.jitter,
      until: action.until,
    },
    Date.now(),
  );
  if (!checked.ok) throw new WorkflowError(`Schedule not added: ${checked.problem}.`);
  // Checked now as a start would be; its agent steps will run isolated, as the runs are headless.
  try {
    await preflightLaunch({ ref: workflow, cwd, task: action.task, input, piSession: true }, preflight);
  } catch (error) {
    if (error instanceof LaunchRefused) throw new WorkflowError(error.describe());
    throw error;
  }
  const schedule = savedOrThrow(
    await bridge.host.call("schedules.add", checked.request),
    "Schedule not added",
  );
  return {
    text: `Schedule ${schedule.scheduleId} added: next firing ${when(schedule.nextAt)}. Its runs run headless, not in this session.`,
    details: { action: "schedule", op: "add", scheduleId: schedule.scheduleId, nextAt: schedule.nextAt },
  };
}
