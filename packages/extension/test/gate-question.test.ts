import { describe, expect, it } from "vitest";
import { gateQuestion } from "../src/gate-dialog.js";

const boolean = { type: "boolean" };

describe("the dialog a gate opens, from its answer schema", () => {
  it("asks Yes/No for a boolean, alone or as the one required field", () => {
    const alone = gateQuestion(boolean);
    expect(alone).toMatchObject({ kind: "choice", options: ["Yes", "No"] });
    if (alone.kind !== "choice") throw new Error("not a choice");
    expect(alone.answerOf("Yes")).toBe(true);
    expect(alone.answerOf("No")).toBe(false);
    const field = gateQuestion({
      type: "object",
      properties: { approved: boolean, comment: { type: "string" } },
      required: ["approved"],
    });
    if (field.kind !== "choice") throw new Error("not a choice");
    expect(field.answerOf("No")).toEqual({ approved: false });
  });

  it("offers an enum's values, alone or as the one required field", () => {
    const alone = gateQuestion({ type: "string", enum: ["ship", "hold"] });
    if (alone.kind !== "choice") throw new Error("not a choice");
    expect(alone.options).toEqual(["ship", "hold"]);
    expect(alone.answerOf("hold")).toBe("hold");
    const field = gateQuestion({
      type: "object",
      properties: { verdict: { type: "string", enum: ["ship", "hold"] } },
      required: ["verdict"],
    });
    if (field.kind !== "choice") throw new Error("not a choice");
    expect(field.answerOf("ship")).toEqual({ verdict: "ship" });
  });

  it("offers an approval gate's choices, and asks a note after the choice that needs one", () => {
    const note = { type: "string", minLength: 1, maxLength: 4000 };
    const variant = (choice: string, required: string[]) => ({
      type: "object",
      properties: { choice: { type: "string", const: choice }, note },
      required,
      additionalProperties: false,
    });
    // What `approval()` answers compile to (its default choices).
    const gate = gateQuestion({
      oneOf: [
        variant("continue", ["choice"]),
        variant("stop", ["choice"]),
        variant("revise", ["choice", "note"]),
      ],
    });
    expect(gate).toEqual({
      kind: "choice-note",
      field: "choice",
      options: ["continue", "stop", "revise"],
      noteRequired: ["revise"],
    });
    // Variants with other fields, or that disagree on the field, are typed as JSON.
    const mixed = gateQuestion({
      oneOf: [
        variant("a", ["choice"]),
        { ...variant("b", ["choice"]), properties: { kind: { const: "b" } } },
      ],
    });
    expect(mixed.kind).toBe("json");
  });

  it("asks for JSON, with an example as the placeholder, for anything else", () => {
    expect(
      gateQuestion({
        type: "object",
        properties: { approved: boolean, by: { type: "string" } },
        required: ["approved", "by"],
      }),
    ).toEqual({ kind: "json", placeholder: '{"approved":true,"by":"text"}' });
    expect(gateQuestion({ type: "array", items: { type: "number" }, minItems: 1 })).toEqual({
      kind: "json",
      placeholder: "[0]",
    });
    expect(gateQuestion(null)).toEqual({ kind: "json", placeholder: "" });
  });
});
