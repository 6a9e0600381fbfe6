import type { AgentSessionReport, JsonValue, RunOrigin, SafeError } from "@piw/protocol";
import type { AgentSessionKind, IsolatedAgentOptions } from "../authoring/agent-options.js";
import type { CompiledAgentNode } from "../compiler/compiled-workflow.js";
import type { AgentEvent } from "./run-port.js";

/** Pi's read-only tools: what an isolated step gets when it names none. */
export const READ_ONLY_TOOLS: readonly string[] = ["read", "grep", "find", "ls"];

/** One isolated step visit's attempt, as the session that runs it needs to know it. */
export interface IsolatedStep {
  runId: string;
  path: string;
  visit: number;
  attempt: number;
  /** The JSON Schema of the output, for the submit tool's description. */
  outputSchema: JsonValue;
  model?: string;
  thinking?: IsolatedAgentOptions["thinking"];
  tools: readonly string[];
  systemPrompt?: string;
  cwd: string;
  /**
   * The model's `update` of this step's progress, checked like `ctx.progress` (a refusal says which
   * field is wrong); absent where progress is not kept.
   */
  progress?(update: unknown): { ok: true } | { ok: false; problem: string };
  /**
   * What the session used so far, after each model reply. `true` stops it at once: the run's budget
   * is reached, and the session aborts before another model call and yields `budget_exceeded`.
   */
  usage?(usage: IsolatedUsage): Promise<boolean>;
}

/** An isolated session's usage so far: tokens in and out, dollars, and the turns it was given. */
export interface IsolatedUsage {
  tokens: number;
  usd: number;
  turns: number;
}

/** What an isolated session cost and said: saved with its visit, shown by `piw status` and the viewer. */
export type IsolatedAgentReport = AgentSessionReport;

/**
 * A live isolated session: the step contract drives it exactly as it drives the conversation.
 * `deliver` starts a model turn with the text; `next` yields submissions (from the session's own
 * `workflow` tool) and turn ends; `close` aborts whatever runs and reports what the session did.
 */
export interface IsolatedAgentSession {
  deliver(body: string): void;
  next(signal: AbortSignal): Promise<AgentEvent>;
  close(): Promise<IsolatedAgentReport>;
}

/** Opens isolated sessions; the worker supplies one backed by Pi's SDK (`@piw/pi-agent`). */
export interface IsolatedAgentSessions {
  open(
    step: IsolatedStep,
  ): Promise<{ ok: true; session: IsolatedAgentSession } | { ok: false; error: SafeError }>;
}

/** Where a run's agent steps may run: who started it, its directory and how to open isolated sessions. */
export interface AgentPlacement {
  origin: RunOrigin;
  workingDir: string | null;
  isolated?: IsolatedAgentSessions;
}

/**
 * Where a step runs: what the step says, else `conversation` for a run started from Pi (its
 * conversation is there) and `isolated` for any other run (a shell, cron, CI has no conversation).
 */
export function agentSessionFor(node: CompiledAgentNode, origin: RunOrigin): AgentSessionKind {
  if (node.session !== "default") return node.session;
  return origin.kind === "pi" ? "conversation" : "isolated";
}
