import { describe, expect, it } from "vitest";
import { canonicalJson, newRunId, runIdSchema, runMessageId, visitMessageId } from "../src/index.js";

describe("canonicalJson", () => {
  it("sorts object keys at every level, so key order never changes the text", () => {
    const a = { b: 1, a: { d: [{ z: 1, y: 2 }], c: null } };
    const b = { a: { c: null, d: [{ y: 2, z: 1 }] }, b: 1 };
    expect(canonicalJson(a)).toBe('{"a":{"c":null,"d":[{"y":2,"z":1}]},"b":1}');
    expect(canonicalJson(b)).toBe(canonicalJson(a));
  });

  it("writes a Date as its ISO string, at the top and inside objects and arrays", () => {
    const at = new Date(Date.UTC(2026, 0, 2, 3, 4, 5, 6));
    expect(canonicalJson(at)).toBe('"2026-01-02T03:04:05.006Z"');
    expect(canonicalJson({ at, list: [at] })).toBe(
      '{"at":"2026-01-02T03:04:05.006Z","list":["2026-01-02T03:04:05.006Z"]}',
    );
  });

  it("drops undefined members, writes undefined in an array as null, and refuses a value with no JSON text", () => {
    expect(canonicalJson({ keep: 1, gone: undefined })).toBe('{"keep":1}');
    expect(canonicalJson([1, undefined, 3])).toBe("[1,null,3]");
    expect(() => canonicalJson(undefined)).toThrow(TypeError);
    expect(() => canonicalJson(() => 1)).toThrow(TypeError);
  });
});

describe("run and message IDs", () => {
  it("names a run <workflow>-<base36 time>-<8 hex>, always a valid run ID", () => {
    const id = newRunId("review", 1_700_000_000_000);
    expect(id).toMatch(/^review-loyw3v28-[0-9a-f]{8}$/);
    expect(newRunId("review", 1_700_000_000_000)).not.toBe(id);
    for (const name of ["my workflow", "-lead", "ü", "a".repeat(300)]) {
      expect(runIdSchema.safeParse(newRunId(name)).success).toBe(true);
    }
  });

  it("derives message IDs from what they are about", () => {
    expect(visitMessageId({ runId: "r-1", path: "a/b", visit: 2 }, "step:1")).toBe("msg:r-1:a/b:2:step:1");
    expect(runMessageId("r-1", "terminal")).toBe("msg:r-1:terminal");
  });
});
