import { describe, expect, it } from "vitest";
import { LIVE_CHARS_MAX, LIVE_ENTRIES_MAX, LiveTranscript } from "../src/index.js";

const assistant = (text: string) => ({ role: "assistant", content: [{ type: "text", text }] });
const update = (text: string) => ({ type: "message_update", message: assistant(text) });

describe("a live transcript of a Pi session's events", () => {
  it("shows the prompt, the model's text as it streams, and each tool call and result", () => {
    const live = new LiveTranscript();
    expect(
      live.apply({ type: "message_start", message: { role: "user", content: "Summarise the notes" } }),
    ).toBe(true);
    expect(live.apply({ type: "message_start", message: assistant("") })).toBe(false);
    expect(live.apply(update("Reading"))).toBe(true);
    expect(live.apply(update("Reading the notes"))).toBe(true);
    // The same text again (a thinking or tool-call delta) changes nothing.
    expect(live.apply(update("Reading the notes"))).toBe(false);
    expect(live.apply({ type: "message_end", message: assistant("Reading the notes.") })).toBe(true);
    live.apply({ type: "tool_execution_start", toolName: "read", args: { path: "notes.md" } });
    live.apply({
      type: "tool_execution_end",
      toolName: "read",
      result: { content: [{ type: "text", text: "x".repeat(900) }] },
      isError: false,
    });
    live.apply(update("Done"));
    const { entries, omitted } = live.snapshot();
    expect(omitted).toBe(0);
    expect(entries.map((e) => e.role)).toEqual([
      "user",
      "assistant",
      "tool_call",
      "tool_result",
      "assistant",
    ]);
    expect(entries[1]).toEqual({ role: "assistant", text: "Reading the notes." });
    expect(entries[2]).toEqual({ role: "tool_call", tool: "read", arguments: '{"path":"notes.md"}' });
    // A tool's result is shown, not copied.
    expect(entries[3]?.role === "tool_result" && entries[3].text.length).toBeLessThan(520);
    expect(entries[4]).toEqual({ role: "assistant", text: "Done" });
    expect(live.apply({ type: "agent_end", messages: [] })).toBe(false);
    expect(live.apply(null)).toBe(false);
  });

  it("keeps a rolling bound: the latest entries, the latest characters of a long stream", () => {
    const live = new LiveTranscript();
    for (let i = 0; i < LIVE_ENTRIES_MAX + 10; i += 1) {
      live.apply({ type: "tool_execution_start", toolName: "bash", args: { command: `step ${i}` } });
    }
    let snapshot = live.snapshot();
    expect(snapshot.entries).toHaveLength(LIVE_ENTRIES_MAX);
    expect(snapshot.omitted).toBe(10);
    expect(snapshot.entries.at(-1)).toMatchObject({
      arguments: `{"command":"step ${LIVE_ENTRIES_MAX + 9}"}`,
    });

    // A long streamed reply keeps its latest characters while it streams, and all entries together
    // stay within the character bound however many messages stream.
    let text = "";
    for (let i = 0; i < 400; i += 1) {
      text += `word${i} `;
      live.apply(update(text));
    }
    snapshot = live.snapshot();
    const last = snapshot.entries.at(-1);
    expect(last?.role).toBe("assistant");
    expect(last?.role === "assistant" && last.text.startsWith("…")).toBe(true);
    expect(last?.role === "assistant" && last.text.endsWith("word399 ")).toBe(true);
    for (let m = 0; m < 20; m += 1) {
      // Each end settles the message streaming before it: 20 messages in all.
      live.apply({ type: "message_end", message: assistant("y".repeat(3_000)) });
      live.apply(update("z".repeat(1_500)));
    }
    snapshot = live.snapshot();
    const chars = snapshot.entries.reduce((sum, e) => sum + JSON.stringify(e).length, 0);
    expect(chars).toBeLessThan(LIVE_CHARS_MAX + 2_000);
    expect(snapshot.entries.length + snapshot.omitted).toBe(LIVE_ENTRIES_MAX + 10 + 1 + 20);
  });
});
