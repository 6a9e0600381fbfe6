import { readFileSync, statSync } from "node:fs";
import { piContentText, piMessageTranscript, type TranscriptEntry, type TurnEntries } from "@piw/protocol";

/** A session file larger than this is not read for the viewer: it says the messages are not shown. */
const SESSION_FILE_MAX_BYTES = 64 * 1024 * 1024;
/** The most entries one turn's walk follows: a turn longer than this shows its last ones. */
const TURN_ENTRIES_MAX = 2_000;

interface SessionEntry {
  id: string;
  parentId: string | null;
  type: string;
  message?: unknown;
  content?: unknown;
}

function entryOf(line: string): SessionEntry | undefined {
  try {
    const value = JSON.parse(line) as Partial<SessionEntry>;
    if (typeof value.id !== "string" || typeof value.type !== "string") return undefined;
    return {
      id: value.id,
      parentId: typeof value.parentId === "string" ? value.parentId : null,
      type: value.type,
      message: value.message,
      content: value.content,
    };
  } catch {
    // A line Pi was still writing when the host read the file: the turn's own lines are complete.
    return undefined;
  }
}

/**
 * One Pi turn's messages, read from Pi's session file: the entries from the step prompt's to the
 * turn's last, following each entry's parent so another branch of the session never shows. Null
 * when the file is gone, too large, or no longer holds those entries.
 */
export function readTurnTranscript(at: TurnEntries): TranscriptEntry[] | null {
  let text: string;
  try {
    if (statSync(at.sessionFile).size > SESSION_FILE_MAX_BYTES) return null;
    text = readFileSync(at.sessionFile, "utf8");
  } catch {
    return null;
  }
  const byId = new Map<string, SessionEntry>();
  for (const line of text.split("\n")) {
    const entry = line === "" ? undefined : entryOf(line);
    if (entry !== undefined) byId.set(entry.id, entry);
  }
  const turn: SessionEntry[] = [];
  for (let id: string | null = at.lastEntryId; id !== null && turn.length < TURN_ENTRIES_MAX; ) {
    const entry = byId.get(id);
    if (entry === undefined) return null;
    turn.push(entry);
    if (id === at.firstEntryId) break;
    id = entry.parentId;
  }
  if (turn.at(-1)?.id !== at.firstEntryId && turn.length < TURN_ENTRIES_MAX) return null;
  return turn.reverse().flatMap((entry): TranscriptEntry[] => {
    if (entry.type === "message") return piMessageTranscript(entry.message);
    // The step prompt piw delivered: a custom message, shown as the prompt it is.
    if (entry.type === "custom_message") return [{ role: "user", text: piContentText(entry.content) }];
    return [];
  });
}
