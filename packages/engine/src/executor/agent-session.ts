import type { JsonValue, RunOrigin, SafeError } from "@piw/protocol";
import type { AgentSessionKind, IsolatedAgentOptions } from "../authoring/agent-options.js";
import type { CompiledAgentNode } from "../compiler/compiled-workflow.js";
import type { AgentEvent } from "./run-port.js";

/** The effect type under which each isolated attempt's session record is saved with its visit. */
export const AGENT_SESSION_EFFECT = "agent.session";

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
}

/** One entry of a step's saved transcript; texts are cut to a bound. */
export type TranscriptEntry =
  | { role: "user"; text: string }
  | { role: "assistant"; text: string }
  | { role: "tool_call"; tool: string; arguments: string }
  | { role: "tool_result"; tool: string; text: string; isError: boolean };

/** What an isolated session cost and said: saved with its visit, shown by `piw status` and the viewer. */
export interface IsolatedAgentReport {
  /** `"<provider>/<model id>"`, or null when the session never chose one. */
  model: string | null;
  tokensIn: number;
  tokensOut: number;
  /** In the provider's currency units, when the model reports a price; else null. */
  cost: number | null;
  durationMs: number;
  transcript: TranscriptEntry[];
  /** Entries left out at the start to keep the transcript within its bound. */
  transcriptOmitted: number;
}

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
  open(step: IsolatedStep): Promise<{ ok: true; session: IsolatedAgentSession } | { ok: false; error: SafeError }>;
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
