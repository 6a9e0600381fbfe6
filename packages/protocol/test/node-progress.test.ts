import { describe, expect, it } from "vitest";
import { applyProgressUpdate, boundProgressMessage, PROGRESS_MESSAGE_MAX_CHARS } from "../src/index.js";

const EMPTY = { done: null, total: null, message: null };

describe("applyProgressUpdate", () => {
  it("merges an update into the previous state: a field left out keeps its value, null clears it", () => {
    const first = applyProgressUpdate(null, { done: 1, total: 10, message: "start" });
    expect(first).toEqual({ ok: true, state: { done: 1, total: 10, message: "start" } });
    if (!first.ok) throw new Error("refused");
    expect(applyProgressUpdate(first.state, { done: 2 })).toEqual({
      ok: true,
      state: { done: 2, total: 10, message: "start" },
    });
    expect(applyProgressUpdate(first.state, { total: null, message: null })).toEqual({
      ok: true,
      state: { done: 1, total: null, message: null },
    });
    expect(applyProgressUpdate(null, {})).toEqual({ ok: true, state: EMPTY });
  });

  it("takes the author's eta (a Date or epoch ms) and a run-wide scope, kept until changed", () => {
    const at = Date.UTC(2026, 11, 4, 18, 0, 0);
    const first = applyProgressUpdate(null, { done: 3, total: 100, eta: new Date(at), scope: "run" });
    expect(first).toEqual({
      ok: true,
      state: { done: 3, total: 100, message: null, eta: at, scope: "run" },
    });
    if (!first.ok) throw new Error("refused");
    expect(applyProgressUpdate(first.state, { done: 4 })).toEqual({
      ok: true,
      state: { done: 4, total: 100, message: null, eta: at, scope: "run" },
    });
    expect(applyProgressUpdate(first.state, { eta: null, scope: "step" })).toEqual({
      ok: true,
      state: { done: 3, total: 100, message: null },
    });
    expect(applyProgressUpdate(null, { eta: at + 0.4 })).toEqual({
      ok: true,
      state: { ...EMPTY, eta: at },
    });
  });

  it("refuses bad updates with a reason that names fields, never values", () => {
    const problem = (previous: Parameters<typeof applyProgressUpdate>[0], raw: unknown) => {
      const checked = applyProgressUpdate(previous, raw);
      return checked.ok ? "accepted" : checked.problem;
    };
    expect(problem(null, 3)).toBe("a progress update is an object with done, total and/or message");
    expect(problem(null, [1])).toBe("a progress update is an object with done, total and/or message");
    expect(problem(null, { done: Number.NaN })).toBe("done must be a finite number or null");
    expect(problem(null, { total: Number.POSITIVE_INFINITY })).toBe("total must be a finite number or null");
    expect(problem(null, { done: "3" })).toBe("done must be a finite number or null");
    expect(problem(null, { done: -1 })).toBe("done must not be negative");
    expect(problem(null, { message: 7 })).toBe("message must be a string or null");
    expect(problem(null, { done: 5, total: 2 })).toBe("done must not be greater than total");
    expect(problem(null, { eta: "tomorrow" })).toBe("eta must be a Date, epoch milliseconds or null");
    expect(problem(null, { eta: new Date(Number.NaN) })).toBe(
      "eta must be a Date, epoch milliseconds or null",
    );
    expect(problem(null, { scope: "all" })).toBe('scope must be "step" or "run"');
    // Checked once merged: a later `done` above the saved total is refused too.
    expect(problem({ done: 1, total: 4, message: null }, { done: 5 })).toBe(
      "done must not be greater than total",
    );
    expect(problem(null, { totl: 5 })).toBe(
      '"totl" is not a progress field (use done, total, message, eta, scope)',
    );
    expect(problem(null, { "sk-secret value": 1 })).toBe(
      "a field is not a progress field (use done, total, message, eta, scope)",
    );
  });
});

describe("boundProgressMessage", () => {
  it("makes one line and cuts to the limit with an ellipsis, keeping the text as given", () => {
    expect(boundProgressMessage("  reading\nfile\t2  ")).toBe("reading file 2");
    expect(boundProgressMessage(" \n ")).toBeNull();
    const long = boundProgressMessage("é".repeat(500)) ?? "";
    expect(long).toHaveLength(PROGRESS_MESSAGE_MAX_CHARS);
    expect(long.endsWith("…")).toBe(true);
    // Characters, not UTF-16 units, are counted, and one outside the BMP is never cut in half.
    expect(boundProgressMessage("😀".repeat(150))).toBe("😀".repeat(150));
    const emoji = boundProgressMessage("😀".repeat(300)) ?? "";
    expect(emoji).toBe(`${"😀".repeat(PROGRESS_MESSAGE_MAX_CHARS - 1)}…`);
  });
});
