import type { NodeProgress } from "@piw/protocol";
import { describe, expect, it } from "vitest";
import {
  ASCII_GLYPHS,
  agentProgressWords,
  etaWords,
  nodeProgressOf,
  progressCount,
  progressWords,
  UNICODE_GLYPHS,
} from "../src/index.js";

const NOW = 1_000_000;

function progress(patch: Partial<NodeProgress> = {}): NodeProgress {
  return {
    path: "build",
    visit: 1,
    done: 3,
    total: 10,
    message: "compiling the parser",
    updatedAt: NOW - 5_000,
    eta: { at: NOW + 2 * 60_000, confidence: "high" },
    ...patch,
  };
}

describe("progress words", () => {
  it("count what was reported, and only that", () => {
    expect(progressCount(progress())).toBe("3/10");
    expect(progressCount(progress({ total: null }))).toBe("3 done");
    expect(progressCount(progress({ done: null }))).toBe("?/10");
    expect(progressCount(progress({ done: null, total: null }))).toBe("");
    expect(progressCount(progress({ done: 0.456, total: 1 }))).toBe("46%");
    expect(progressCount(progress({ done: 2.25, total: 7.5 }))).toBe("2.3/7.5");
  });

  it("say the estimate more loosely the less sure it is", () => {
    const at = NOW + 2 * 60_000;
    expect(etaWords({ at, confidence: "high" }, NOW)).toBe("2 min left");
    expect(etaWords({ at, confidence: "medium" }, NOW)).toBe("about 2 min left");
    expect(etaWords({ at, confidence: "low" }, NOW)).toBe("roughly 2 min left");
    // Compact, for the footer and the graph's cards.
    expect(etaWords({ at, confidence: "high" }, NOW, true)).toBe("2 min left");
    expect(etaWords({ at, confidence: "medium" }, NOW, true)).toBe("~2 min left");
    expect(etaWords({ at, confidence: "low" }, NOW, true)).toBe("~2 min left?");
    // Seconds only when sure; a rough long estimate rounds to five minutes, then to half hours.
    expect(etaWords({ at: NOW + 42_000, confidence: "high" }, NOW)).toBe("45s left");
    expect(etaWords({ at: NOW + 42_000, confidence: "medium" }, NOW)).toBe("about 1 min left");
    expect(etaWords({ at: NOW + 23 * 60_000, confidence: "low" }, NOW)).toBe("roughly 25 min left");
    expect(etaWords({ at: NOW + 23 * 60_000, confidence: "high" }, NOW)).toBe("23 min left");
    expect(etaWords({ at: NOW + 95 * 60_000, confidence: "medium" }, NOW)).toBe("about 1 h 35 min left");
    expect(etaWords({ at: NOW + 95 * 60_000, confidence: "low" }, NOW)).toBe("roughly 1.5 h left");
    // Past the estimate: due now, never a negative time.
    expect(etaWords({ at: NOW - 1, confidence: "high" }, NOW)).toBe("due now");
    expect(etaWords({ at: NOW - 1, confidence: "low" }, NOW, true)).toBe("~due now?");
    expect(etaWords(null, NOW)).toBe("");
  });

  it("name the clock time on a line that is never redrawn", () => {
    const at = new Date(2026, 11, 1, 14, 5, 30).getTime();
    expect(etaWords({ at, confidence: "high" }, undefined)).toBe("done by 14:05");
    expect(etaWords({ at, confidence: "medium" }, undefined)).toBe("done about 14:05");
    expect(etaWords({ at, confidence: "low" }, undefined)).toBe("done roughly 14:05");
    expect(etaWords({ at, confidence: "low" }, undefined, true)).toBe("~14:05?");
  });

  it("put the count, the bar and the estimate before the message", () => {
    const p = progress({ eta: { at: NOW + 2 * 60_000, confidence: "medium" } });
    expect(progressWords(p, { now: NOW, glyphs: UNICODE_GLYPHS, bar: 10 })).toBe(
      "3/10 ███░░░░░░░ · about 2 min left · compiling the parser",
    );
    expect(progressWords(p, { now: NOW, glyphs: ASCII_GLYPHS, bar: 10 })).toBe(
      "3/10 ###------- - about 2 min left - compiling the parser",
    );
    expect(progressWords(progress({ done: 1, total: 3 }), { now: NOW, glyphs: UNICODE_GLYPHS, bar: 6 })).toBe(
      "1/3 ██░░░░ · 2 min left · compiling the parser",
    );
    expect(
      progressWords(progress({ done: null, total: null, eta: null, message: "warming up\nthe cache" }), {
        now: NOW,
        glyphs: UNICODE_GLYPHS,
        bar: 10,
      }),
    ).toBe("warming up the cache");
    expect(progressWords(p, { now: NOW, glyphs: UNICODE_GLYPHS, compact: true, noMessage: true })).toBe(
      "3/10 · ~2 min left",
    );
  });

  it("belong to the running visit that reported them", () => {
    const view = { progress: [progress({ visit: 2 })] };
    expect(nodeProgressOf(view, { path: "build", visits: 2, state: "running" })?.done).toBe(3);
    // An earlier visit's report, a finished node, another node: nothing.
    expect(nodeProgressOf(view, { path: "build", visits: 3, state: "running" })).toBeUndefined();
    expect(nodeProgressOf(view, { path: "build", visits: 2, state: "succeeded" })).toBeUndefined();
    expect(nodeProgressOf(view, { path: "test", visits: 2, state: "running" })).toBeUndefined();
    expect(nodeProgressOf({}, { path: "build", visits: 2, state: "running" })).toBeUndefined();
  });

  it("word an isolated agent's latest fact with its tool calls", () => {
    const fact = {
      path: "review",
      visit: 1,
      attempt: 1,
      seq: 2,
      toolCalls: 4,
      kind: "tool" as const,
      text: "read a.ts",
    };
    expect(agentProgressWords(fact)).toBe("→ read a.ts (4 tool calls)");
    expect(agentProgressWords({ ...fact, toolCalls: 1 })).toBe("→ read a.ts (1 tool call)");
    expect(agentProgressWords({ ...fact, kind: "submitted", text: '{"ok":true}' })).toBe(
      'submitted {"ok":true} (4 tool calls)',
    );
  });
});
