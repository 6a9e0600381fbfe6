import {
  type AgentEvent,
  AgentEventQueue,
  type IsolatedAgentReport,
  type IsolatedAgentSession,
  type IsolatedAgentSessions,
  type IsolatedStep,
} from "@piw/engine";
import { LiveTranscript, type LiveTranscriptSnapshot, safeError } from "@piw/protocol";
import { markPiProcess, piAgentDir } from "@piw/state-dir";
import { loadPiSdk, PiSdkMissing, type PiSdk, type PiSdkSources } from "./load-pi-sdk.js";
import { modelFailureMessage } from "./model-failure-message.js";
import { boundedTranscript, toolCallSummary, usageOf } from "./session-record.js";
import { configureHint, resolveStepModel } from "./step-model.js";

type AgentSession = Awaited<ReturnType<PiSdk["createAgentSession"]>>["session"];
type ToolDefinition = NonNullable<Parameters<PiSdk["createAgentSession"]>[0]>["customTools"] extends
  | (infer T)[]
  | undefined
  ? T
  : never;

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
  /**
   * The attempt's live transcript (bounded: its latest entries) after each change, as the model's
   * text streams and its tools start and end: for the worker to relay, rate-limited, to the viewers.
   */
  onLive?(step: IsolatedStep, live: LiveTranscriptSnapshot): void;
}

/** The name of the submit tool: the step contract tells the model to call it. */
const SUBMIT_TOOL = "workflow";

function refused(
  message: string,
  code: "node_failed" | "pi_sdk_missing" | "model_unavailable" = "node_failed",
) {
  return { ok: false as const, error: safeError(code, message) };
}

/** The model's last reply in the session, if any. */
function lastReply(session: AgentSession) {
  return session.messages.findLast((m) => (m as { role?: string }).role === "assistant") as
    | { stopReason?: string; errorMessage?: string; provider?: string; model?: string }
    | undefined;
}

/** The model that failed, as `provider/id`, and its provider: the reply's, else the session's. */
function failedModel(session: AgentSession): { name: string; provider: string } {
  const reply = lastReply(session);
  const provider = reply?.provider ?? session.model?.provider ?? "unknown";
  const id = reply?.model ?? session.model?.id ?? "unknown";
  return { name: `${provider}/${id}`, provider };
}

/** A provider error no retry heals, as the step's event; else null. */
function unavailable(step: IsolatedStep, session: AgentSession, errorText: string): AgentEvent | null {
  const { name, provider } = failedModel(session);
  const message = modelFailureMessage(errorText, step.path, name, provider);
  return message === null ? null : { type: "model_unavailable", message };
}

/** How the model's turn ended, from its last reply: an error, an abort, or a normal end. */
function turnEvent(step: IsolatedStep, session: AgentSession): AgentEvent {
  const last = lastReply(session);
  if (last?.stopReason === "error")
    return unavailable(step, session, last.errorMessage ?? "") ?? { type: "turn_ended", ending: "error" };
  if (last?.stopReason === "aborted") return { type: "turn_ended", ending: "lost" };
  return { type: "turn_ended", ending: "completed" };
}

/** A prompt Pi refused to send (say, no API key for the model) or that broke. */
function thrownEvent(step: IsolatedStep, session: AgentSession, error: unknown): AgentEvent {
  const text = error instanceof Error ? error.message : "";
  return unavailable(step, session, text) ?? { type: "turn_ended", ending: "error" };
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
  // Checked before the session exists: without a usable model, every turn would fail the same way.
  const found = await resolveStepModel(sdk, { agentDir, cwd }, step.model);
  if (!found.ok) return { ok: false as const, problem: found.problem, agentDir };
  const { modelRuntime, pinned } = found;
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
    modelRuntime,
    tools: [...step.tools, SUBMIT_TOOL],
    customTools: [tool],
    ...(pinned === undefined ? {} : { model: pinned }),
    ...(step.thinking === undefined ? {} : { thinkingLevel: step.thinking }),
  });
  // Without a model Pi's session holds a placeholder that no provider serves.
  const model = session.model;
  if (!model || !modelRuntime.getModel(model.provider, model.id)) {
    session.dispose();
    return { ok: false as const, problem: "Pi has no model configured", agentDir };
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
        return refused(
          `Agent step ${step.path} has no usable model: ${created.problem}; ${configureHint(created.agentDir)}.`,
          "model_unavailable",
        );
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
  let turns = 0;
  let overBudget = false;
  const used = { tokens: 0, usd: 0 };
  const transcript = new LiveTranscript();
  const unsubscribe = session.subscribe((event) => {
    if (options.onLive !== undefined && transcript.apply(event)) options.onLive(step, transcript.snapshot());
    if (event.type === "tool_execution_start" && event.toolName !== SUBMIT_TOOL)
      options.onProgress?.(step, { kind: "tool", text: toolCallSummary(event.toolName, event.args) });
  });
  // After each model reply (and its tool calls), before Pi decides on its next call: Pi awaits this
  // hook, so a session at its budget ends here and never calls the model again.
  const finishTurn = session.agent.finishTurn;
  session.agent.finishTurn = async (turn, signal) => {
    // Pi's hook may return nothing: that keeps its normal scheduling.
    const decision = (await finishTurn?.(turn, signal)) as { action: "continue" | "end" } | undefined;
    if (!overBudget) {
      const reply = usageOf([turn.message]);
      used.tokens += reply.tokensIn + reply.tokensOut;
      used.usd += reply.cost ?? 0;
      if ((await step.usage?.({ ...used, turns })) === true) {
        overBudget = true;
        queue.push({ type: "budget_exceeded" });
      }
    }
    return overBudget ? { action: "end" as const } : decision;
  };
  return {
    deliver(body) {
      turns += 1;
      session.prompt(body).then(
        () => queue.push(turnEvent(step, session)),
        (error: unknown) => queue.push(thrownEvent(step, session, error)),
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
          turns,
          ...boundedTranscript(session.messages),
        };
        session.dispose();
        return report;
      })();
      return closing;
    },
  };
}
