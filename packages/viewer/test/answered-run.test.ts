import { describe, expect, it } from "vitest";
import { plainTheme, renderRunTable, runStateText, UNICODE_GLYPHS } from "../src/index.js";
import { runHeader } from "../src/run-header.js";
import { manifestNode, runViewOf } from "./run-view-fixture.js";

const manifest = {
  version: 1 as const,
  workflow: "approval",
  startPath: "approve",
  exits: ["done"],
  maxSteps: 10,
  nodes: [manifestNode("approve", "checkpoint")],
  mounts: [],
  edges: [],
};

describe("a waiting run whose checkpoint was answered", () => {
  const answered = runViewOf(manifest, {
    status: "done",
    outcome: "waiting",
    finishedAt: 2_000,
    continuedAs: "approval-2",
  });

  it("names its continuation in the run list and the header, the CLI's words", () => {
    expect(runStateText(answered)).toBe("answered → approval-2");
    const table = renderRunTable([answered], {
      width: 160,
      now: 3_000,
      theme: plainTheme,
      glyphs: UNICODE_GLYPHS,
    });
    expect(table[1]).toMatch(/^ +⏸ answered → approval-2 +approval /);
    expect(runHeader(answered, 3_000, plainTheme, UNICODE_GLYPHS)).toContain("⏸ answered → approval-2");
  });

  it("still says waiting while nobody answered", () => {
    const waiting = { ...answered, continuedAs: null };
    expect(runStateText(waiting)).toBe("waiting");
    expect(runHeader(waiting, 3_000, plainTheme, UNICODE_GLYPHS)).toContain("⏸ waiting");
  });
});
