import type {
  ExtensionAPI,
  ExtensionCommandContext,
  ExtensionContext,
} from "@earendil-works/pi-coding-agent";
import { listWorkflowFiles, readPreflightEnv } from "@piw/engine";
import { checkPiSdkDir, findPiSdkDir, markPiProcess, PIW_ENV } from "@piw/state-dir";
import { Type } from "typebox";
import { BuiltinNames } from "./builtin-names.js";
import { currentRunId } from "./current-run.js";
import { GateDialogs } from "./gate-dialog.js";
import { asWorkflowError } from "./host-link.js";
import { registerPiwMessageRenderer } from "./message-renderer.js";
import { SCHEDULE_OPS } from "./schedule-action.js";
import { SessionBridge } from "./session-bridge.js";
import {
  answerAction,
  type ExtensionPreflight,
  parseAction,
  runAction,
  WORKFLOW_ACTIONS,
  type WorkflowAction,
} from "./workflow-actions.js";
import { parseWorkflowCommand, type WorkflowCommand } from "./workflow-command.js";
import { RecentRuns, workflowCompletions } from "./workflow-completions.js";
import { LiveTurnRelay } from "./live-turn-relay.js";
import { registerViewerCommand } from "./viewer-command.js";

export interface PiwExtensionOptions {
  /** argv that starts a piw host when none answers (the Pi package passes its bundled host). */
  hostCommand?: readonly string[];
  /** The host's state folder; default `PIW_HOME`, else Pi's agent folder's `workflows/`. */
  stateDir?: string;
  /**
   * argv that starts the preflight child, which loads workflow files outside Pi's process (the Pi
   * package passes the worker app's `dist/preflight.js`). `PIW_PREFLIGHT_COMMAND` overrides it.
   */
  preflightCommand?: readonly string[];
  /** The preflight's time limit; default `PIW_PREFLIGHT_TIMEOUT_MS`, else 10 s. */
  preflightTimeoutMs?: number;
}

/**
 * The preflight settings: the environment's command over the package's, a bad variable ignored, and
 * this Pi's SDK for the model check of isolated steps.
 */
function extensionPreflight(options: PiwExtensionOptions, piSdk: string | null): ExtensionPreflight {
  const settings = readPreflightEnv(process.env);
  if (settings.kind === "invalid") process.stderr.write(`piw: ${settings.message}; ignoring it\n`);
  const fromEnv = settings.kind === "ok" ? settings : { command: undefined, timeoutMs: undefined };
  const command = fromEnv.command ?? options.preflightCommand;
  if (command === undefined) return undefined;
  const sdk = piSdk === null ? null : checkPiSdkDir(piSdk);
  return {
    command,
    timeoutMs: options.preflightTimeoutMs ?? fromEnv.timeoutMs,
    ...(sdk?.ok ? { piSdkEntry: sdk.entry } : {}),
  };
}

// One object root: strict providers reject a top-level union. Each action's arguments are
// checked again at run time (`parseAction`) with an error the model can act on.
const workflowToolParameters = Type.Object({
  action: Type.Union(
    WORKFLOW_ACTIONS.map((name) => Type.Literal(name)),
    { description: "What to do." },
  ),
  workflow: Type.Optional(
    Type.String({ description: "start: the workflow name (or a path to a .workflow.ts file)." }),
  ),
  task: Type.Optional(Type.String({ description: "start: the task, for workflows that take { task }." })),
  input: Type.Optional(Type.Any({ description: "start: the whole input as JSON, instead of task." })),
  budget: Type.Optional(
    Type.String({
      description:
        "start/resume: what the run may spend, e.g. usd=2,tokens=500k,agentTurns=20,wallMs=30m (resume: raises the limits of a run parked at its budget).",
    }),
  ),
  runId: Type.Optional(
    Type.String({
      description:
        "status/pause/resume/cancel/restart/answer: the run ID (status: default the active run, else the latest).",
    }),
  ),
  answer: Type.Optional(Type.Any({ description: "answer: the checkpoint answer as JSON." })),
  output: Type.Optional(
    Type.Any({ description: "submit: the structured output the current workflow step asks for." }),
  ),
  done: Type.Optional(
    Type.Number({ minimum: 0, description: "update: how much of the current step is done." }),
  ),
  total: Type.Optional(
    Type.Number({ minimum: 0, description: "update: how much the current step has in all." }),
  ),
  message: Type.Optional(
    Type.String({ maxLength: 200, description: "update: one line on what the current step is doing." }),
  ),
  op: Type.Optional(
    Type.Union(
      SCHEDULE_OPS.map((op) => Type.Literal(op)),
      { description: "schedule: what to do with schedules." },
    ),
  ),
  name: Type.Optional(
    Type.String({ description: "schedule: the schedule's name (add: default the workflow's)." }),
  ),
  every: Type.Optional(Type.String({ description: "schedule add: an interval such as 30m, 2h, 1d." })),
  cron: Type.Optional(Type.String({ description: 'schedule add: five cron fields, e.g. "0 9 * * 1-5".' })),
  tz: Type.Optional(Type.String({ description: "schedule add: the cron's IANA time zone (default UTC)." })),
  overlap: Type.Optional(
    Type.String({ description: "schedule add: skip (default), buffer-one, cancel-previous or allow." }),
  ),
  catchUp: Type.Optional(Type.String({ description: "schedule add: none, latest (default) or all." })),
  catchUpWindow: Type.Optional(
    Type.String({ description: "schedule add: how far back catch-up goes (1h)." }),
  ),
  jitter: Type.Optional(Type.String({ description: "schedule add: a random delay bound, e.g. 30s." })),
  until: Type.Optional(Type.String({ description: "schedule add: no firing after this ISO 8601 time." })),
  note: Type.Optional(Type.String({ description: "schedule pause: why." })),
});

const TOOL_DESCRIPTION = [
  "Operate durable piw workflows.",
  "start: queue a workflow (it starts after this turn ends) — returns its run ID.",
  "submit: complete the workflow step whose prompt started this turn, with the output it asks for; if it is rejected, fix the output and submit again.",
  "update: while working on that step, report its progress (done, total, message; each optional); it does not complete the step.",
  "schedule: add (workflow plus every or cron), list, pause, resume, trigger or delete schedules; a schedule's runs are the user's and run headless, not in this conversation.",
  "status/list: inspect runs; pause/resume/cancel: control a run; restart: run a finished run again from its start as a new run (it starts after this turn ends); answer: answer a run waiting at a checkpoint the model may answer (a checkpoint for a person refuses it: ask the user).",
].join(" ");

/**
 * The piw Pi extension: the `workflow` tool and `/workflow` command (one lifecycle), turn reports,
 * activation at idle boundaries, delivery of the host's messages, and the run widget.
 */
export function piwExtension(options: PiwExtensionOptions = {}): (pi: ExtensionAPI) => void {
  return (pi) => {
    // Everything Pi starts from now on (its bash tool's commands included) inherits the mark, by which
    // `piw answer` refuses to give a person's answer from under Pi's tools.
    markPiProcess();
    // A dialog's answer is a person's, through the same path as `/workflow answer`.
    const gates = new GateDialogs(
      async (runId, answer) => (await answerAction(bridge, runId, answer, "human")).text,
    );
    // Pi's own SDK, found from the file this Pi process was started from (see findPiSdkDir).
    const piSdk = findPiSdkDir();
    const stateDir = options.stateDir ?? process.env[PIW_ENV.home.name];
    const bridge: SessionBridge = new SessionBridge(pi, {
      hostCommand: options.hostCommand,
      stateDir,
      piSdk: piSdk ?? undefined,
      onOwnView: (view, ctx) => gates.onView(view, ctx),
    });
    const preflight = extensionPreflight(options, piSdk);
    registerPiwMessageRenderer(pi);

    pi.registerTool({
      name: "workflow",
      label: "Workflow",
      description: TOOL_DESCRIPTION,
      promptSnippet: "workflow: start and operate durable piw workflows; submit workflow step outputs",
      parameters: workflowToolParameters,
      async execute(_toolCallId, params, _signal, _onUpdate, ctx) {
        bridge.remember(ctx);
        try {
          // Whatever the arguments say, the tool is the model: it can never answer as a person.
          const result = await runAction(bridge, parseAction(params), ctx.cwd, preflight, "model");
          return { content: [{ type: "text", text: result.text }], details: result.details };
        } catch (error) {
          throw asWorkflowError(error);
        }
      },
    });

    const recentRuns = new RecentRuns(() =>
      bridge.host.call("runs.list", { sessionId: bridge.sessionId, limit: 50 }),
    );
    const builtinNames = new BuiltinNames(preflight);
    pi.registerCommand("workflow", {
      description:
        "Start or operate a piw workflow: /workflow <name> [task…] | list | status|pause|resume|cancel [runId] | restart <runId> | answer <runId> <json>",
      getArgumentCompletions: async (prefix) => {
        const files = workflowNames(bridge.cwd);
        const builtins = bridge.cwd === undefined ? [] : await builtinNames.get(bridge.cwd);
        const workflows = [...files, ...builtins.filter((name) => !files.includes(name))];
        return workflowCompletions(prefix, { workflows, runs: await recentRuns.get() });
      },
      handler: async (args, ctx) => {
        await runCommand(bridge, args, ctx, preflight);
        recentRuns.stale();
      },
    });

    registerViewerCommand(pi, bridge, stateDir);

    pi.on("session_start", async (_event, ctx) => {
      try {
        await bridge.sessionStarted(ctx);
      } catch (error) {
        ctx.ui.setStatus("piw", `wf host problem: ${asWorkflowError(error).message.slice(0, 200)}`);
      }
    });
    pi.on("before_agent_start", (event, ctx) => {
      bridge.remember(ctx);
      bridge.agentStarting(event.messageType === "custom" ? event.message : undefined);
    });
    pi.on("agent_start", (_event, ctx) => {
      bridge.remember(ctx);
      bridge.agentStarted();
    });
    const live = new LiveTurnRelay(bridge);
    pi.on("message_start", (event) => live.observe(event));
    pi.on("message_update", (event) => live.observe(event));
    pi.on("tool_execution_start", (event) => live.observe(event));
    pi.on("tool_execution_end", (event) => live.observe(event));
    pi.on("message_end", async (event, ctx) => {
      bridge.remember(ctx);
      live.observe(event);
      await bridge.messageEnded(event.message);
    });
    pi.on("agent_end", async (event, ctx) => {
      bridge.remember(ctx);
      await bridge.agentEnded(event.messages);
    });
    pi.on("agent_settled", async (_event, ctx) => {
      bridge.remember(ctx);
      await bridge.settled();
    });
    pi.on("session_shutdown", async () => {
      await bridge.shutdown();
    });
  };
}

async function runCommand(
  bridge: SessionBridge,
  args: string,
  ctx: ExtensionCommandContext,
  preflight: ExtensionPreflight,
): Promise<void> {
  bridge.remember(ctx);
  let command: WorkflowCommand;
  try {
    command = parseWorkflowCommand(args);
  } catch (error) {
    ctx.ui.notify(asWorkflowError(error).message, "error");
    return;
  }
  try {
    // A run verb without a run ID acts on the session's current run, chosen now.
    const action: WorkflowAction =
      "current" in command
        ? { action: command.action, runId: await currentRunId(bridge, command.action) }
        : command;
    // A slash command is typed by the person at the keyboard.
    const result = await runAction(bridge, action, ctx.cwd, preflight, "human");
    ctx.ui.notify(result.text, "info");
    // A start from the command line of an idle session starts now: this is an idle boundary.
    if (action.action !== "submit" && isIdle(ctx)) await bridge.settled();
  } catch (error) {
    ctx.ui.notify(asWorkflowError(error).message, "error");
  }
}

/** The workflow names found from `cwd`, for completions; none when the folder cannot be read. */
function workflowNames(cwd: string | undefined): string[] {
  if (cwd === undefined) return [];
  try {
    return listWorkflowFiles(cwd).map((file) => file.name);
  } catch {
    return [];
  }
}

function isIdle(ctx: ExtensionContext): boolean {
  return ctx.isIdle() && !ctx.hasPendingMessages();
}
