import { z } from "zod";
import { type TranscriptEntry, transcriptEntrySchema } from "./agent-session.js";
import { nodePathSchema, opaqueIdSchema, visitNumberSchema } from "./ids.js";
import { piContentText } from "./pi-message-transcript.js";

/** The most entries a live transcript keeps: the latest ones. */
export const LIVE_ENTRIES_MAX = 24;
/** The most characters all kept entries hold together: older entries go first. */
export const LIVE_CHARS_MAX = 12_000;
/** The longest text one live entry keeps: a message still streaming keeps its latest characters. */
const LIVE_ENTRY_CHARS_MAX = 2_000;
/** The longest tool result a live entry keeps: a result is shown, not copied. */
const LIVE_RESULT_CHARS_MAX = 500;

/**
 * What one running agent step said and did so far, as the process running it reports it: the latest
 * entries only (a rolling bound, never the whole session), live and never saved. `omitted` counts
 * the entries dropped at the start to keep the bound.
 */
const liveTranscriptSchema = z.object({
  entries: z.array(transcriptEntrySchema).max(LIVE_ENTRIES_MAX),
  omitted: z.number().int().min(0),
});
export type LiveTranscriptSnapshot = z.infer<typeof liveTranscriptSchema>;

/** An isolated attempt's live transcript, as its worker sends it (`agent.live`). */
export const agentLiveSchema = z.object({
  path: nodePathSchema,
  visit: visitNumberSchema,
  attempt: z.number().int().min(1),
  live: liveTranscriptSchema,
});
export type AgentLive = z.infer<typeof agentLiveSchema>;

/** A conversation step's live transcript: the host ties it to the session's open step turn. */
export const turnLiveSchema = z.object({ sessionId: opaqueIdSchema, live: liveTranscriptSchema });

function head(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max)}… (cut)`;
}

/** The latest characters of a text still growing: what the model says now matters most. */
function tail(text: string, max: number): string {
  return text.length <= max ? text : `…${text.slice(text.length - max)}`;
}

function entryChars(entry: TranscriptEntry): number {
  switch (entry.role) {
    case "user":
    case "assistant":
      return entry.text.length;
    case "tool_call":
      return entry.tool.length + entry.arguments.length;
    case "tool_result":
      return entry.tool.length + entry.text.length;
    default:
      return entry satisfies never;
  }
}

type PiEvent = {
  type?: unknown;
  message?: { role?: unknown; content?: unknown };
  toolName?: unknown;
  args?: unknown;
  result?: { content?: unknown };
  isError?: unknown;
};

/**
 * A Pi agent session's events (an SDK session's, or an extension's view of the user's session) as a
 * bounded live transcript: the prompt, the model's text as it streams, each tool call as it starts
 * and its result as it ends. Texts are cut as the saved transcript cuts them, except the message
 * still streaming, which keeps its latest characters.
 */
export class LiveTranscript {
  private entries: TranscriptEntry[] = [];
  private omitted = 0;
  /** The index of the model's message being streamed, while one is. */
  private streaming: number | undefined;

  /** Take one Pi event; true when the transcript changed. Events it does not know change nothing. */
  apply(raw: unknown): boolean {
    if (typeof raw !== "object" || raw === null) return false;
    const event = raw as PiEvent;
    switch (event.type) {
      case "message_start":
      case "message_update":
      case "message_end":
        return this.message(event.type, event.message);
      case "tool_execution_start":
        this.streaming = undefined;
        return this.add({
          role: "tool_call",
          tool: String(event.toolName),
          arguments: head(JSON.stringify(event.args ?? {}), LIVE_ENTRY_CHARS_MAX),
        });
      case "tool_execution_end":
        this.streaming = undefined;
        return this.add({
          role: "tool_result",
          tool: String(event.toolName),
          text: head(piContentText(event.result?.content), LIVE_RESULT_CHARS_MAX),
          isError: event.isError === true,
        });
      default:
        return false;
    }
  }

  snapshot(): LiveTranscriptSnapshot {
    return { entries: [...this.entries], omitted: this.omitted };
  }

  private message(type: "message_start" | "message_update" | "message_end", message: PiEvent["message"]) {
    if (message?.role === "user") {
      if (type !== "message_start") return false;
      this.streaming = undefined;
      return this.add({ role: "user", text: head(piContentText(message.content), LIVE_ENTRY_CHARS_MAX) });
    }
    if (message?.role !== "assistant") return false;
    const text = piContentText(message.content);
    const shown =
      type === "message_end" ? head(text, LIVE_ENTRY_CHARS_MAX) : tail(text, LIVE_ENTRY_CHARS_MAX);
    const at = this.streaming;
    if (type === "message_end") this.streaming = undefined;
    if (at !== undefined) {
      const before = this.entries[at];
      if (before?.role === "assistant" && before.text === shown) return false;
      this.entries[at] = { role: "assistant", text: shown };
      this.trim();
      return true;
    }
    // A reply with no text (only tool calls) adds nothing until text comes.
    if (shown === "") return false;
    const added = this.add({ role: "assistant", text: shown });
    if (type !== "message_end") this.streaming = this.entries.length - 1;
    return added;
  }

  private add(entry: TranscriptEntry): true {
    this.entries.push(entry);
    this.trim();
    return true;
  }

  /** Drop the oldest entries past either bound; the newest always stays. */
  private trim(): void {
    let chars = this.entries.reduce((sum, entry) => sum + entryChars(entry), 0);
    let drop = 0;
    for (const entry of this.entries) {
      const left = this.entries.length - drop;
      if (left <= 1 || (left <= LIVE_ENTRIES_MAX && chars <= LIVE_CHARS_MAX)) break;
      chars -= entryChars(entry);
      drop += 1;
    }
    if (drop === 0) return;
    this.entries = this.entries.slice(drop);
    this.omitted += drop;
    if (this.streaming !== undefined)
      this.streaming = this.streaming >= drop ? this.streaming - drop : undefined;
  }
}
