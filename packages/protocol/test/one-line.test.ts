import { describe, expect, it } from "vitest";
import { codePointLength, oneLine } from "../src/index.js";
import { oneLineSchema } from "../src/one-line.js";

describe("oneLine", () => {
  it("makes every run of whitespace and control characters one space and trims the ends", () => {
    expect(oneLine("  reading\nfile\t2 \u2028 of\u0000 3  ", 100)).toBe("reading file 2 of 3");
    expect(oneLine(" \n\t ", 10)).toBe("");
  });

  it("keeps a line of exactly the limit and cuts a longer one to the limit, the ellipsis included", () => {
    expect(oneLine("abc", 3)).toBe("abc");
    expect(oneLine("abcd", 3)).toBe("ab…");
    expect(oneLine("abcd", 1)).toBe("…");
  });

  it("counts code points: astral characters are one each and never split", () => {
    const line = oneLine("😀".repeat(10), 5);
    expect(line).toBe("😀😀😀😀…");
    expect(line).not.toMatch(/\p{Cs}/u);
    expect(oneLine("𝒜𝒜𝒜", 3)).toBe("𝒜𝒜𝒜");
    expect(codePointLength("a😀𝒜")).toBe(3);
    // A family emoji is several code points joined: each counts, and the cut still lands between two.
    const family = "👨‍👩‍👧";
    expect(oneLine(family.repeat(4), 6)).not.toMatch(/\p{Cs}/u);
  });

  it("agrees with its schema: what it returns, the schema accepts", () => {
    for (const text of ["x".repeat(500), "😀".repeat(500), `a\n${"𝒜".repeat(300)}`]) {
      expect(oneLineSchema(200).safeParse(oneLine(text, 200)).success).toBe(true);
    }
    expect(oneLineSchema(3).safeParse("😀😀😀😀").success).toBe(false);
  });
});
