import type { TranscriptEntry } from "./agent-session.js";

/** The longest text one transcript entry keeps. */
const TRANSCRIPT_TEXT_MAX = 2_000;

function cut(text: string): string {
  return text.length <= TRANSCRIPT_TEXT_MAX ? text : `${text.slice(0, TRANSCRIPT_TEXT_MAX)}… (cut)`;
}

type Part = { type?: unknown; text?: unknown; name?: unknown; arguments?: unknown };

/** The text parts of a Pi message's content, joined: a string content is its own text. */
export function piContentText(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return (content as Part[])
    .filter((part) => part?.type === "text" && typeof part.text === "string")
    .map((part) => part.text as string)
    .join("\n");
}

/**
 * One Pi agent message (as an isolated session holds it, or a Pi session file's `message` entry
 * carries it) as transcript entries: its text, and each tool call it made. Texts are cut to a bound.
 */
export function piMessageTranscript(message: unknown): TranscriptEntry[] {
  if (typeof message !== "object" || message === null) return [];
  const m = message as { role?: unknown; content?: unknown; toolName?: unknown; isError?: unknown };
  switch (m.role) {
    case "user":
      return [{ role: "user", text: cut(piContentText(m.content)) }];
    case "assistant": {
      const entries: TranscriptEntry[] = [];
      const text = piContentText(m.content);
      if (text !== "") entries.push({ role: "assistant", text: cut(text) });
      for (const part of Array.isArray(m.content) ? (m.content as Part[]) : []) {
        if (part?.type !== "toolCall") continue;
        entries.push({
          role: "tool_call",
          tool: String(part.name),
          arguments: cut(JSON.stringify(part.arguments ?? {})),
        });
      }
      return entries;
    }
    case "toolResult":
      return [
        {
          role: "tool_result",
          tool: String(m.toolName),
          text: cut(piContentText(m.content)),
          isError: m.isError === true,
        },
      ];
    default:
      return [];
  }
}
