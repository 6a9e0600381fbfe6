import { join } from "node:path";
import {
  AgentEventQueue,
  type IsolatedAgentReport,
  type IsolatedAgentSession,
  type IsolatedAgentSessions,
  type IsolatedStep,
} from "@piw/engine";
import { safeError } from "@piw/protocol";
import { markPiProcess, piAgentDir } from "@piw/state-dir";
import { loadPiSdk, PiSdkMissing, type PiSdk, type PiSdkSources } from "./load-pi-sdk.js";
import { boundedTranscript, toolCallSummary, usageOf } from "./session-record.js";

type AgentSession = Awaited<ReturnType<PiSdk["createAgentSession"]>>["session"];
type ToolDefinition = NonNullable<Parameters<PiSdk["createAgentSession"]>[0]>["customTools"] extends
  | (infer T)[]
  | undefined
  ? T
  : never;
type ModelRuntime = Awaited<ReturnType<PiSdk["ModelRuntime"]["create"]>>;
type TurnEnding = "completed" | "error" | "lost";

/** One progress fact of an isolated session. */
export interface IsolatedProgress {
  kind: "tool" | "submitted";
  text: string;
}

export interface PiAgentSessionsOptions {
  /** Whose Pi settings, models and credentials: `PI_CODING_AGENT_DIR` and `HOME` are read from it. */
  env?: NodeJS.ProcessEnv;
  /** Where else Pi's SDK may be: the entry a connected Pi reported, as the host handed it on. */
  sdk?: PiSdkSources;
  /**
   * Each tool call as it starts (`text`: the tool's name and a secret-free summary, see
   * `toolCallSummary`) and the accepted output (`text`: its JSON), for the worker to relay.
   */
  onProgress?(step: IsolatedStep, event: IsolatedProgress): void;
}

/** The name of the submit tool: the step contract tells the model to call it. */
const SUBMIT_TOOL = "workflow";

function refused(message: string, code: "node_failed" | "pi_sdk_missing" = "node_failed") {
  return { ok: false as const, error: safeError(code, message) };
}

/** How the model's turn ended, from its last reply: an error, an abort, or a normal end. */
function endingOf(session: AgentSession): TurnEnding {
  const last = session.messages.findLast((m) => (m as { role?: string }).role === "assistant") as
    | { stopReason?: string }
    | undefined;
  if (last?.stopReason === "error") return "error";
  if (last?.stopReason === "aborted") return "lost";
  return "completed";
}

/** The model's `update`: the step's progress, refused with the reason when the update is bad. */
function updateResult(step: IsolatedStep, params: Record<string, unknown>) {
  const { action: _action, output: _output, ...update } = params;
  const saved = step.progress?.(update) ?? { ok: true as const };
  return saved.ok
    ? { content: [{ type: "text", text: `Progress of ${step.path} updated.` }], details: {} }
    : { content: [{ type: "text", text: `Update refused: ${saved.problem}.` }], details: {}, isError: true };
}

function submitTool(
  step: IsolatedStep,
  queue: AgentEventQueue,
  options: PiAgentSessionsOptions,
): ToolDefinition {
  return {
    name: SUBMIT_TOOL,
    label: "workflow",
    description:
      `Submit the output of workflow step ${step.path}: call with {"action":"submit","output":<the output>}, ` +
      "the output matching the step contract's JSON Schema. A rejected submit says what to fix. " +
      'While working on a long step, report progress with {"action":"update","done":<n>,"total":<n>,"message":"<one line>"} ' +
      "(each field optional; it does not end the step).",
    parameters: {
      type: "object",
      properties: {
        action: { type: "string", enum: ["submit", "update"] },
        output: { description: "submit: the step's output, matching the step contract's JSON Schema." },
        done: { type: "number", minimum: 0, description: "update: how much of the step is done." },
        total: { type: "number", minimum: 0, description: "update: how much there is in all." },
        message: { type: "string", maxLength: 200, description: "update: one line on what is happening." },
      },
      required: ["action"],
    } as never,
    execute: async (_id: string, params: Record<string, unknown>) => {
      if (params.action === "update") return updateResult(step, params);
      return new Promise((resolve) => {
        queue.push({
          type: "submission",
          output: params.output,
          respond(verdict) {
            if (verdict.accepted)
              options.onProgress?.(step, { kind: "submitted", text: JSON.stringify(params.output ?? null) });
            // An accepted output ends the session's work: `terminate` stops the model's turn here.
            resolve(
              verdict.accepted
                ? {
                    content: [{ type: "text", text: `Accepted: workflow step ${step.path} is complete.` }],
                    details: {},
                    terminate: true,
                  }
                : { content: [{ type: "text", text: verdict.reason }], details: {}, isError: true },
            );
          },
        });
      });
    },
  } as unknown as ToolDefinition;
}

async function createSession(sdk: PiSdk, step: IsolatedStep, env: NodeJS.ProcessEnv, tool: ToolDefinition) {
  const agentDir = piAgentDir({ env });
  const { cwd } = step;
  let pinned:
    | { model: NonNullable<ReturnType<ModelRuntime["getModel"]>>; modelRuntime: ModelRuntime }
    | undefined;
  if (step.model !== undefined) {
    const modelRuntime = await sdk.ModelRuntime.create({
      authPath: join(agentDir, "auth.json"),
      modelsPath: join(agentDir, "models.json"),
    });
    const slash = step.model.indexOf("/");
    const model = modelRuntime.getModel(step.model.slice(0, slash), step.model.slice(slash + 1));
    if (!model)
      return {
        ok: false as const,
        message: `model ${step.model} is not one Pi knows (check ${join(agentDir, "models.json")})`,
      };
    pinned = { model, modelRuntime };
  }
  // A focused session: the user's context files and skills, none of their extensions (piw's own
  // among them, whose workflow tool would collide with this session's submit tool).
  const resourceLoader = new sdk.DefaultResourceLoader({
    cwd,
    agentDir,
    noExtensions: true,
    ...(step.systemPrompt === undefined ? {} : { appendSystemPrompt: [step.systemPrompt] }),
  });
  await resourceLoader.reload();
  const { session } = await sdk.createAgentSession({
    cwd,
    agentDir,
    sessionManager: sdk.SessionManager.inMemory(cwd),
    settingsManager: sdk.SettingsManager.create(cwd, agentDir),
    resourceLoader,
    tools: [...step.tools, SUBMIT_TOOL],
    customTools: [tool],
    ...(pinned ?? {}),
    ...(step.thinking === undefined ? {} : { thinkingLevel: step.thinking }),
  });
  if (!session.model) {
    session.dispose();
    return { ok: false as const, message: `Pi has no model configured (set one with pi, in ${agentDir})` };
  }
  return { ok: true as const, session };
}

/**
 * Isolated agent steps in Pi SDK sessions: one fresh in-memory session per visit attempt, with the
 * user's Pi settings, models and credentials found in Pi's agent folder as @piw/state-dir computes
 * it (`piAgentDir`). The step contract drives it through `IsolatedAgentSession`; Pi is loaded on first use.
 */
export function createPiAgentSessions(options: PiAgentSessionsOptions = {}): IsolatedAgentSessions {
  const env = options.env ?? process.env;
  return {
    async open(step) {
      let sdk: PiSdk;
      try {
        sdk = await loadPiSdk(env, options.sdk);
      } catch (error) {
        return refused(
          error instanceof PiSdkMissing ? error.message : "Pi's SDK failed to load.",
          "pi_sdk_missing",
        );
      }
      // This process now runs Pi sessions whose bash tool is the model's: what it starts carries the
      // mark by which `piw answer` refuses, as under Pi itself.
      markPiProcess();
      const queue = new AgentEventQueue();
      const tool = submitTool(step, queue, options);
      let created: Awaited<ReturnType<typeof createSession>>;
      try {
        created = await createSession(sdk, step, env, tool);
      } catch {
        // Pi's own error may quote settings or paths with secrets in them: say only where it failed.
        return refused(`The isolated Pi session of ${step.path} could not be created.`);
      }
      if (!created.ok)
        return refused(`The isolated Pi session of ${step.path} could not start: ${created.message}.`);
      return { ok: true, session: liveSession(step, created.session, queue, options) };
    },
  };
}

function liveSession(
  step: IsolatedStep,
  session: AgentSession,
  queue: AgentEventQueue,
  options: PiAgentSessionsOptions,
): IsolatedAgentSession {
  const startedAt = Date.now();
  let closing: Promise<IsolatedAgentReport> | undefined;
  const unsubscribe = session.subscribe((event) => {
    if (event.type === "tool_execution_start" && event.toolName !== SUBMIT_TOOL)
      options.onProgress?.(step, { kind: "tool", text: toolCallSummary(event.toolName, event.args) });
  });
  return {
    deliver(body) {
      session.prompt(body).then(
        () => queue.push({ type: "turn_ended", ending: endingOf(session) }),
        () => queue.push({ type: "turn_ended", ending: "error" }),
      );
    },
    next: (signal) => queue.next(signal),
    close() {
      closing ??= (async () => {
        unsubscribe();
        await session.abort().catch(() => undefined);
        const model = session.model ? `${session.model.provider}/${session.model.id}` : null;
        const report: IsolatedAgentReport = {
          model,
          ...usageOf(session.messages),
          durationMs: Date.now() - startedAt,
          ...boundedTranscript(session.messages),
        };
        session.dispose();
        return report;
      })();
      return closing;
    },
  };
}
