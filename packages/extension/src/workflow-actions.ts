import {
  describeBuiltins,
  LaunchRefused,
  listWorkflowFiles,
  type PreflightOptions,
  preflightLaunch,
  workflowSearchDirs,
} from "@piw/engine";
import {
  type Answerer,
  asSentence,
  captureRunEnv,
  isClockReason,
  type JsonValue,
  jsonValueSchema,
  type RecoveryReason,
  type RunSummary,
  type RunView,
} from "@piw/protocol";
import { clockWords, renderWidgetLines, runStateWord } from "@piw/viewer";
import { z } from "zod";
import { currentRunId } from "./current-run.js";
import { savedOrThrow, WorkflowError } from "./host-link.js";
import type { SessionBridge } from "./session-bridge.js";

export const WORKFLOW_ACTIONS = [
  "list",
  "start",
  "status",
  "pause",
  "resume",
  "cancel",
  "restart",
  "answer",
  "submit",
  "update",
] as const;
export type WorkflowActionName = (typeof WORKFLOW_ACTIONS)[number];

const runIdField = z.string().min(1, "runId is required").max(200);

/**
 * Every action's arguments, checked at run time: the tool's JSON schema is one flat object (strict
 * providers reject a top-level union), so this is where a wrong combination gets its clear error.
 */
const actionSchemas = {
  list: z.object({ action: z.literal("list") }),
  start: z.object({
    action: z.literal("start"),
    workflow: z.string().min(1, "workflow (a name or a .workflow.ts path) is required").max(1000),
    task: z
      .string()
      .max(64 * 1024)
      .optional(),
    input: jsonValueSchema.optional(),
  }),
  status: z.object({ action: z.literal("status"), runId: runIdField.optional() }),
  pause: z.object({ action: z.literal("pause"), runId: runIdField }),
  resume: z.object({ action: z.literal("resume"), runId: runIdField }),
  cancel: z.object({ action: z.literal("cancel"), runId: runIdField }),
  restart: z.object({ action: z.literal("restart"), runId: runIdField }),
  answer: z.object({ action: z.literal("answer"), runId: runIdField, answer: jsonValueSchema }),
  submit: z.object({ action: z.literal("submit"), output: jsonValueSchema }),
  // The host checks the update against the step's saved progress (done <= total once merged).
  update: z.object({
    action: z.literal("update"),
    done: z.number().min(0).optional(),
    total: z.number().min(0).optional(),
    message: z.string().max(4096).optional(),
  }),
} satisfies Record<WorkflowActionName, z.ZodType>;

export type WorkflowAction = {
  [K in WorkflowActionName]: z.infer<(typeof actionSchemas)[K]>;
}[WorkflowActionName];

/** The structured result every action returns beside its text. */
export interface ActionResult {
  text: string;
  details: { action: WorkflowActionName; [key: string]: unknown };
}

/** What to give for each required field, when it is missing: a bare "expected string" helps no one. */
const MISSING_FIELD: Readonly<Record<string, string>> = {
  workflow: "give the workflow's name or a path to its .workflow.ts file (list shows the workflows here)",
  runId: "give the run's ID (list shows this session's runs)",
  answer: "give the checkpoint answer as JSON",
  output: "give the structured output the current step asks for",
};

/** Check raw tool or command arguments; a problem is a WorkflowError the caller can fix. */
export function parseAction(raw: unknown): WorkflowAction {
  const action = (raw as { action?: unknown } | null)?.action;
  if (typeof action !== "string" || !(WORKFLOW_ACTIONS as readonly string[]).includes(action)) {
    throw new WorkflowError(`action must be one of: ${WORKFLOW_ACTIONS.join(", ")}.`);
  }
  const args = stripUndefined(raw) as Record<string, unknown>;
  const parsed = actionSchemas[action as WorkflowActionName].safeParse(args);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((issue) => {
      const field = String(issue.path[0] ?? "");
      const help = field in args ? undefined : MISSING_FIELD[field];
      if (help !== undefined) return `${field} is missing: ${help}`;
      return `${issue.path.length ? issue.path.join(".") : "(arguments)"}: ${issue.message}`;
    });
    throw new WorkflowError(`Invalid arguments for workflow ${action}: ${problems.join("; ")}.`);
  }
  return parsed.data as WorkflowAction;
}

function stripUndefined(raw: unknown): unknown {
  if (typeof raw !== "object" || raw === null) return raw;
  return Object.fromEntries(Object.entries(raw).filter(([, value]) => value !== undefined && value !== null));
}

/** When a queued run of this session starts: at the end of the turn under way, or now when idle. */
function whenItStarts(bridge: SessionBridge): string {
  return bridge.isIdle() ? "it starts now" : "it starts when this turn ends";
}

/** A clock park in the words every surface uses; any other reason by its saved message. */
function describeReason(reason: RecoveryReason): string {
  return isClockReason(reason) ? clockWords(reason) : reason.message;
}

function describeRun(view: RunView | RunSummary): string {
  const word = runStateWord(view);
  const reason = view.recoveryReason ? ` (${describeReason(view.recoveryReason)})` : "";
  const error = view.error ? `: [${view.error.code}] ${view.error.message}` : "";
  return asSentence(`Workflow ${view.workflowName} run ${view.runId} is ${word}${reason}${error}`);
}

/**
 * How the extension loads workflow files: never in Pi's process, but in a preflight child with a time
 * limit (`evaluatePreflight`). Undefined when the Pi package found no preflight entry to start.
 */
export type ExtensionPreflight = PreflightOptions | undefined;

/**
 * The one lifecycle behind the `workflow` tool and `/workflow`: both parse into a WorkflowAction and
 * run it here, so a start from the model and a start from the user are the same start. `answerer`
 * is who is acting, fixed by the caller's code path (the tool says `model`, a command or dialog
 * says `human`) and never read from the arguments: the host refuses an answer a checkpoint does
 * not allow from it.
 */
export async function runAction(
  bridge: SessionBridge,
  action: WorkflowAction,
  cwd: string,
  preflight: ExtensionPreflight,
  answerer: Answerer,
): Promise<ActionResult> {
  switch (action.action) {
    case "list":
      return listAction(bridge, cwd, preflight);
    case "start":
      return startAction(bridge, action, cwd, preflightOrThrow(preflight), answerer);
    case "status": {
      const runId = action.runId ?? (await currentRunId(bridge, "status"));
      const view = await bridge.host.call("runs.get", { runId });
      if (!view) throw new WorkflowError(`There is no workflow run ${runId}.`);
      const lines = [describeRun(view), ...renderWidgetLines(view, { width: 100, maxLines: 20 })];
      return { text: lines.join("\n"), details: { action: "status", runId, status: view.status, view } };
    }
    case "pause":
    case "resume":
    case "cancel": {
      const method = `runs.${action.action}` as const;
      // A cancel says who asked: the model that cancels its own run gets no follow-up turn about it.
      const params =
        action.action === "cancel" ? { runId: action.runId, by: answerer } : { runId: action.runId };
      const summary = savedOrThrow(
        await bridge.host.call(method, params),
        `Could not ${action.action} run ${action.runId}`,
      );
      if (action.action === "resume") bridge.follow(action.runId);
      const said = {
        pause: `Pause requested for run ${summary.runId}; it stops at the current step.`,
        resume: `Run ${summary.runId} resumed.`,
        cancel: `Run ${summary.runId} cancelled.`,
      }[action.action];
      return {
        text: `${said} ${describeRun(summary)}`,
        details: { action: action.action, runId: summary.runId, status: summary.status },
      };
    }
    case "restart": {
      // A restart is a new run of this session (the clean-restart rule: fresh from the first node, no parent
      // state); like a start, it activates once this turn has settled.
      const child = savedOrThrow(
        await bridge.host.call("runs.restart", { runId: action.runId }),
        `Could not restart run ${action.runId}`,
      );
      bridge.follow(child.runId);
      return {
        text: `Workflow ${child.workflowName} queued (run ${child.runId}): a restart of run ${action.runId}; ${whenItStarts(bridge)}.`,
        details: { action: "restart", runId: child.runId, parentRunId: action.runId, queued: true },
      };
    }
    case "answer":
      return answerAction(bridge, action.runId, action.answer, answerer);
    case "submit": {
      await bridge.whenTurnKnown();
      const verdict = await bridge.host.call("turns.submit", {
        sessionId: bridge.sessionId,
        output: action.output,
      });
      if (!verdict.accepted) throw new WorkflowError(verdict.reason);
      return {
        text: `Accepted: workflow step ${verdict.path} of run ${verdict.runId} is complete. End your turn now; the workflow continues on its own.`,
        details: { action: "submit", runId: verdict.runId, path: verdict.path, accepted: true },
      };
    }
    case "update": {
      await bridge.whenTurnKnown();
      const { action: _update, ...update } = action;
      const saved = await bridge.host.call("turns.update", { sessionId: bridge.sessionId, update });
      return {
        text: `Progress of workflow step ${saved.path} updated. Keep working on it; submit its output when it is done.`,
        details: { action: "update", runId: saved.runId, path: saved.path, visit: saved.visit },
      };
    }
    default:
      return action satisfies never;
  }
}

async function listAction(
  bridge: SessionBridge,
  cwd: string,
  preflight: ExtensionPreflight,
): Promise<ActionResult> {
  const files = listWorkflowFiles(cwd);
  const runs = await bridge.host.call("runs.list", { sessionId: bridge.sessionId, limit: 10 });
  // A file of the same name shadows a built-in, as when it is started.
  const builtins = (preflight === undefined ? [] : await describeBuiltins(cwd, preflight)).filter(
    (builtin) => !files.some((file) => file.name === builtin.name),
  );
  const lines = [
    files.length === 0
      ? `No workflows found in ${workflowSearchDirs({ cwd }).join(" or ")}.`
      : `Workflows: ${files.map((file) => file.name).join(", ")}`,
    ...(builtins.length === 0
      ? []
      : [
          "Built-in workflows (free words go to the field named):",
          ...builtins.map((b) =>
            `- ${b.name} [${b.textInput ?? "no input"}]: ${b.summary ?? b.title ?? ""}`.trimEnd(),
          ),
        ]),
    ...(runs.length === 0 ? [] : ["Runs of this session:", ...runs.map((run) => `- ${describeRun(run)}`)]),
  ];
  return {
    text: lines.join("\n"),
    details: {
      action: "list",
      workflows: [...files.map((file) => file.name), ...builtins.map((builtin) => builtin.name)],
      runs: runs.map((run) => ({ runId: run.runId, workflow: run.workflowName, status: run.status })),
    },
  };
}

function preflightOrThrow(preflight: ExtensionPreflight): PreflightOptions {
  if (preflight === undefined) {
    throw new WorkflowError(
      "piw cannot load workflows here: its preflight entry (the worker app) is not installed; reinstall piw.",
    );
  }
  return preflight;
}

async function startAction(
  bridge: SessionBridge,
  action: Extract<WorkflowAction, { action: "start" }>,
  cwd: string,
  preflight: PreflightOptions,
  startedBy: Answerer,
): Promise<ActionResult> {
  const prepared = await refusals(() =>
    preflightLaunch(
      {
        ref: action.workflow,
        cwd,
        task: action.task,
        input: action.input as JsonValue | undefined,
        piSession: true,
      },
      preflight,
    ),
  );
  const { title: _title, notes: _notes, agentSteps: _agentSteps, notifyModel, ...reserve } = prepared;
  const name = prepared.workflowName;
  // The run's commands see this Pi process's environment (docs/pi.md), saved privately with the run.
  const env = captureRunEnv(process.env);
  if (!env.ok) throw new WorkflowError(`Workflow ${name} was not started: ${env.error.message}`);
  const reserved = savedOrThrow(
    await bridge.host.call("runs.reserve", {
      ...reserve,
      origin: { kind: "pi", sessionId: bridge.sessionId },
      workingDir: cwd,
      env: env.env,
      // Only a run the model started tells the model how it ended; one a person started does not.
      ...(startedBy === "model" ? { notifyModel } : {}),
    }),
    `Workflow ${name} was not started`,
  );
  bridge.follow(reserved.runId);
  const notes = prepared.notes.length > 0 ? ` (${prepared.notes.join("; ")})` : "";
  const agentSteps = prepared.agentSteps.length > 0;
  return {
    text: `Workflow ${name} queued (run ${reserved.runId}).${notes}${
      agentSteps ? ` ${whenItStarts(bridge).replace(/^i/, "I")}; its steps arrive as messages.` : ""
    }`,
    details: { action: "start", workflow: name, runId: reserved.runId, queued: true },
  };
}

export async function answerAction(
  bridge: SessionBridge,
  runId: string,
  answer: JsonValue,
  answerer: Answerer,
): Promise<ActionResult> {
  const view = await bridge.host.call("runs.get", { runId });
  if (!view) throw new WorkflowError(`There is no workflow run ${runId}.`);
  if (view.outcome !== "waiting" || view.cursor === null) {
    throw new WorkflowError(`Run ${runId} is not waiting at a checkpoint (${describeRun(view)})`);
  }
  const checkpoint = view.cursor.path;
  // The host refuses an answer that fails the checkpoint's saved schema, and saves nothing then.
  const child = savedOrThrow(
    await bridge.host.call("runs.answer", { runId, answer, answerer }),
    "Answer not saved",
  );
  bridge.follow(child.runId);
  return {
    text: `Answer saved for checkpoint ${checkpoint}; the workflow continues as run ${child.runId}.`,
    details: { action: "answer", runId, continuation: child.runId },
  };
}

/** A launch refusal becomes the tool's error with every problem on its own line. */
async function refusals<T>(step: () => Promise<T>): Promise<T> {
  try {
    return await step();
  } catch (error) {
    if (error instanceof LaunchRefused) throw new WorkflowError(error.describe());
    throw error;
  }
}
