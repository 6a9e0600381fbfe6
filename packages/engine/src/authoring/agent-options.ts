/**
 * Where an agent step runs: `"conversation"`, in the Pi conversation that owns the run; `"isolated"`,
 * in a fresh Pi SDK session opened by the worker for each visit.
 */
export type AgentSessionKind = "conversation" | "isolated";

/** Pi's thinking levels, as an isolated step may pin one. */
export type AgentThinking = "off" | "minimal" | "low" | "medium" | "high" | "xhigh";

/** What an isolated step's session may be given; a conversation step takes none of these. */
export interface IsolatedAgentOptions {
  /** `"<provider>/<model id>"` as Pi names it; the user's default model when omitted. */
  readonly model?: string;
  readonly thinking?: AgentThinking;
  /** Pi's tool names the session may use; read-only (`read`, `grep`, `find`, `ls`) when omitted. */
  readonly tools?: readonly string[];
  /** Appended to Pi's system prompt for this step. */
  readonly systemPrompt?: string;
  /** The session's working directory; the run's working directory when omitted. */
  readonly cwd?: string;
}
