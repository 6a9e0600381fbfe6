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
    // Checked once merged: a later `done` above the saved total is refused too.
    expect(problem({ done: 1, total: 4, message: null }, { done: 5 })).toBe(
      "done must not be greater than total",
    );
    expect(problem(null, { totl: 5 })).toBe('"totl" is not a progress field (use done, total, message)');
    expect(problem(null, { "sk-secret value": 1 })).toBe(
      "a field is not a progress field (use done, total, message)",
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
