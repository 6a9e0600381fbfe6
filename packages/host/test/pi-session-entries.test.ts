import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { readTurnTranscript } from "../src/pi-session-entries.js";

// A Pi session file as Pi writes it (one JSON entry a line, each naming its parent), read the way
// the host reads a conversation step's turn for the viewer.

let dir: string | undefined;
afterEach(() => {
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

const line = (entry: object) => JSON.stringify(entry);
const user = (text: string) => ({ role: "user", content: [{ type: "text", text }] });

function sessionFile(): string {
  dir = mkdtempSync(join(tmpdir(), "piw-session-"));
  const file = join(dir, "session.jsonl");
  const entries = [
    { type: "session", id: "h", parentId: null },
    { type: "message", id: "e1", parentId: null, message: user("SECRET-EARLIER: my own question") },
    { type: "custom_message", id: "e2", parentId: "e1", customType: "piw", content: "PLAN-STEP: plan it." },
    {
      type: "message",
      id: "e3",
      parentId: "e2",
      message: {
        role: "assistant",
        content: [
          { type: "text", text: "Reading first." },
          { type: "toolCall", name: "read", arguments: { path: "a.md" } },
        ],
      },
    },
    // Another branch of the session, from the same parent: never part of this turn.
    { type: "message", id: "x3", parentId: "e2", message: user("OTHER-BRANCH") },
    {
      type: "message",
      id: "e4",
      parentId: "e3",
      message: { role: "toolResult", toolName: "read", content: [{ type: "text", text: "# a" }] },
    },
    { type: "message", id: "e5", parentId: "e4", message: user("SECRET-LATER: after the turn") },
  ];
  writeFileSync(file, `${entries.map(line).join("\n")}\n{"type":"message","id":"half`);
  return file;
}

describe("a conversation step's turn in Pi's session file", () => {
  it("reads just the turn's entries, along its own branch", () => {
    const file = sessionFile();
    const transcript = readTurnTranscript({ sessionFile: file, firstEntryId: "e2", lastEntryId: "e4" });
    expect(transcript).toEqual([
      { role: "user", text: "PLAN-STEP: plan it." },
      { role: "assistant", text: "Reading first." },
      { role: "tool_call", tool: "read", arguments: '{"path":"a.md"}' },
      { role: "tool_result", tool: "read", text: "# a", isError: false },
    ]);
    expect(JSON.stringify(transcript)).not.toMatch(/SECRET|OTHER-BRANCH/);
  });

  it("gives nothing for a file that is gone or no longer holds the turn", () => {
    const file = sessionFile();
    expect(readTurnTranscript({ sessionFile: file, firstEntryId: "e2", lastEntryId: "gone" })).toBeNull();
    expect(readTurnTranscript({ sessionFile: file, firstEntryId: "x3", lastEntryId: "e4" })).toBeNull();
    expect(
      readTurnTranscript({ sessionFile: join(file, "missing"), firstEntryId: "e2", lastEntryId: "e4" }),
    ).toBeNull();
  });
});
