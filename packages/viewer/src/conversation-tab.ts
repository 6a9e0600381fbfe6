import { wrapTextWithAnsi } from "@earendil-works/pi-tui";
import type { ConversationEntry, ConversationVisit, RunHistory, StepConversation } from "@piw/protocol";
import type { Glyphs } from "./glyphs.js";
import type { TabLines } from "./trace-tab.js";
import { clipToWidth } from "./text-width.js";
import type { Theme } from "./theme.js";

export interface ConversationOptions {
  width: number;
  theme: Theme;
  glyphs: Glyphs;
  /** The chosen node, and whether it is an agent step at all. */
  path: string;
  agent: boolean;
  /** The history as of the replay cursor: visits not started by then are left out. */
  history: RunHistory | null;
  /** Replaying: a visit still running at the cursor shows only its prompt. */
  replaying: boolean;
}

/** Lines a message may take before it is folded. */
const MESSAGE_LINES = 16;

function entryLines(entry: ConversationEntry, theme: Theme, g: Glyphs): { head: string; body: string } {
  switch (entry.type) {
    case "prompt":
      return { head: theme("bold", "prompt"), body: entry.text };
    case "text":
      return { head: theme("cyan", "model"), body: entry.text };
    case "tool_call":
      return { head: theme("yellow", `${g.ascii ? "->" : "→"} ${entry.tool}`), body: entry.arguments };
    case "tool_result":
      return {
        head: theme(
          entry.isError ? "red" : "dim",
          `${g.ascii ? "<-" : "←"} ${entry.tool}${entry.isError ? " (error)" : ""}`,
        ),
        body: entry.text,
      };
    case "submit":
      return { head: theme("bold", "submit"), body: entry.output };
    case "verdict":
      return entry.accepted
        ? { head: theme("green", `${g.node.succeeded} accepted`), body: entry.text }
        : { head: theme("red", `${g.node.failed} rejected`), body: entry.text };
    case "live":
      return {
        head: theme("cyan", `${g.live} ${entry.kind === "tool" ? "now" : "submitted"}`),
        body: entry.text,
      };
    default:
      return entry satisfies never;
  }
}

function visitHead(visit: ConversationVisit): string {
  const where = visit.mode === "isolated" ? "isolated session" : "in the Pi conversation";
  return `visit ${visit.visit}, attempt ${visit.attempt}  ${where}${visit.state === "open" ? "  (running)" : ""}`;
}

/**
 * The chosen agent step's messages, visit by visit: the prompt, the model's text, its tool calls
 * and their (bounded) results, its submit and the verdict. Live entries close an open visit.
 */
export function renderConversation(
  conversation: StepConversation | null,
  options: ConversationOptions,
): TabLines {
  const { theme, glyphs: g, width } = options;
  const lines: string[] = [];
  const push = (line: string) => lines.push(clipToWidth(line, width, g.ellipsis));
  if (!options.agent)
    return { lines: [theme("dim", `${options.path} is not an agent step: no conversation`)], anchor: 0 };
  if (conversation === null || conversation.path !== options.path)
    return { lines: [theme("dim", `loading the conversation${g.ellipsis}`)], anchor: 0 };
  const started = options.history?.steps.filter((s) => s.path === options.path) ?? [];
  // Live, the host's conversation is newer than any history read before it: a visit that just
  // started shows though the history does not know it yet.
  const visits = conversation.visits.filter(
    (visit) => !options.replaying || options.history === null || started.some((s) => s.visit === visit.visit),
  );
  if (visits.length === 0)
    return { lines: [theme("dim", "no messages yet: the step has not run")], anchor: 0 };
  let anchor = 0;
  for (const visit of visits) {
    if (lines.length > 0) push("");
    anchor = lines.length;
    push(theme("bold", visitHead(visit)));
    if (visit.omitted > 0) push(theme("dim", `  ${g.ellipsis} ${visit.omitted} earlier messages left out`));
    // At a replay cursor inside the visit, what the model did later has not happened yet.
    const step = started.find((s) => s.visit === visit.visit && s.attempt === visit.attempt);
    const running = options.replaying && step !== undefined && step.status === "running";
    const entries = running ? visit.entries.filter((e) => e.type === "prompt") : visit.entries;
    for (const entry of entries) {
      const { head, body } = entryLines(entry, theme, g);
      push(`  ${head}`);
      const wrapped = wrapTextWithAnsi(body, Math.max(8, width - 4));
      for (const line of wrapped.slice(0, MESSAGE_LINES)) push(`    ${line}`);
      if (wrapped.length > MESSAGE_LINES)
        push(theme("dim", `    ${g.ellipsis} ${wrapped.length - MESSAGE_LINES} more lines`));
    }
    if (running) push(theme("dim", "  (the model's messages follow later in the replay)"));
  }
  return { lines, anchor };
}
