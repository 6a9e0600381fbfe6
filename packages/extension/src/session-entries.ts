import type { ExtensionContext } from "@earendil-works/pi-coding-agent";
import type { TurnEntries } from "@piw/protocol";
import { deliveredId, PIW_MESSAGE_TYPE } from "./piw-message-details.js";

// Where piw's messages are in the Pi session file: the proof of a delivery, and the place of a turn.

type SessionReader = ExtensionContext["sessionManager"];

/** Whether a session entry is the piw message with this outbox ID. */
function isPiwMessage(entry: unknown, messageId: string): boolean {
  const candidate = entry as { type?: string; customType?: string; details?: unknown };
  return (
    candidate.type === "custom_message" &&
    candidate.customType === PIW_MESSAGE_TYPE &&
    deliveredId(candidate.details) === messageId
  );
}

/** Whether the Pi session already holds the piw message with this outbox ID. */
export function inSession(session: SessionReader | undefined, messageId: string): boolean {
  return (session?.getEntries() ?? []).some((entry) => isPiwMessage(entry, messageId));
}

/**
 * Where a turn's messages are in the session file: from its step prompt's entry to the leaf. Only the
 * place is reported; the host reads those entries when a viewer asks for them.
 */
export function turnEntries(session: SessionReader | undefined, messageId: string): TurnEntries | undefined {
  const sessionFile = session?.getSessionFile();
  const lastEntryId = session?.getLeafId();
  if (session === undefined || sessionFile === undefined || lastEntryId == null) return undefined;
  const first = session.getBranch().find((entry) => isPiwMessage(entry, messageId));
  return first === undefined ? undefined : { sessionFile, firstEntryId: first.id, lastEntryId };
}
