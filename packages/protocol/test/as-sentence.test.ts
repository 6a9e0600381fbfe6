import { describe, expect, it } from "vitest";
import { asSentence } from "../src/index.js";

describe("asSentence", () => {
  it("ends a message in exactly one period, whatever the quoted message ended in", () => {
    expect(asSentence("Workflow file /w/a.workflow.ts no longer exists.")).toBe(
      "Workflow file /w/a.workflow.ts no longer exists.",
    );
    expect(asSentence("run r-1 changed meanwhile; try again")).toBe("run r-1 changed meanwhile; try again.");
    expect(asSentence("is it done?  ")).toBe("is it done?");
    expect(asSentence("clipped…")).toBe("clipped…");
  });
});
