import { visibleWidth } from "@earendil-works/pi-tui";
import { describe, expect, it } from "vitest";
import { textWidth } from "../src/text-width.js";

describe("textWidth", () => {
  // Lines of the shapes the viewer draws, and ones that leave the fast path.
  const lines = [
    "",
    "plain ascii line",
    "✓ succeeded #1 12ms",
    "◆ 検査 step 二",
    "⏸ paused  two  spaces ",
    "tab\there",
    "\u001b[31mred\u001b[0m ✓",
    "e\u0301 combining",
    "👩‍💻 emoji family",
    " leading and trailing ",
  ];
  it.each(lines)("counts %j as pi-tui does", (line) => {
    expect(textWidth(line)).toBe(visibleWidth(line));
  });
});
