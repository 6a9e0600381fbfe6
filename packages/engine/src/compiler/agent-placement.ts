import type { AgentSessionKind, AgentThinking, IsolatedAgentOptions } from "../authoring/agent-options.js";

type Check = (message: string) => void;

const SESSION_KINDS: readonly AgentSessionKind[] = ["conversation", "isolated"];
const THINKING_LEVELS: readonly AgentThinking[] = ["off", "minimal", "low", "medium", "high", "xhigh"];
const ISOLATED_FIELDS = ["model", "thinking", "tools", "systemPrompt", "cwd"] as const;

function nonEmptyString(value: unknown): value is string {
  return typeof value === "string" && value.trim() !== "";
}

/**
 * Where an agent step runs and the options of its isolated session, checked. The session's options
 * belong to an isolated session only: on a step pinned to the conversation they are a problem, since
 * the conversation's model and tools are the user's.
 */
export function agentPlacementOf(
  f: Record<string, unknown>,
  problem: Check,
): { session: AgentSessionKind | "default"; isolated: IsolatedAgentOptions } {
  let session: AgentSessionKind | "default" = "default";
  if (f.session !== undefined) {
    if (SESSION_KINDS.includes(f.session as AgentSessionKind)) session = f.session as AgentSessionKind;
    else problem('session must be "conversation" or "isolated"');
  }
  const isolated: { -readonly [K in keyof IsolatedAgentOptions]: IsolatedAgentOptions[K] } = {};
  if (f.model !== undefined) {
    if (nonEmptyString(f.model) && f.model.includes("/")) isolated.model = f.model;
    else problem('model must be "<provider>/<model id>"');
  }
  if (f.thinking !== undefined) {
    if (THINKING_LEVELS.includes(f.thinking as AgentThinking))
      isolated.thinking = f.thinking as AgentThinking;
    else problem(`thinking must be one of ${THINKING_LEVELS.join(", ")}`);
  }
  if (f.tools !== undefined) {
    if (Array.isArray(f.tools) && f.tools.every(nonEmptyString)) isolated.tools = [...(f.tools as string[])];
    else problem("tools must be an array of Pi tool names");
  }
  if (f.systemPrompt !== undefined) {
    if (typeof f.systemPrompt === "string") isolated.systemPrompt = f.systemPrompt;
    else problem("systemPrompt must be a string");
  }
  if (f.cwd !== undefined) {
    if (nonEmptyString(f.cwd)) isolated.cwd = f.cwd;
    else problem("cwd must be a non-empty string");
  }
  if (session === "conversation") {
    for (const field of ISOLATED_FIELDS) {
      if (f[field] !== undefined)
        problem(`${field} applies only to an isolated session (session: "isolated")`);
    }
  }
  return { session, isolated };
}
