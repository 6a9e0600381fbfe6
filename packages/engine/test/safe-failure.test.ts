import { SAFE_MESSAGE_MAX_BYTES } from "@piw/protocol";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { toSafeError, WorkflowError } from "../src/index.js";

const SECRET = "s3cr3t-value-42";
const site = { code: "node_failed" as const, subject: "Compute node check" };

function saved(thrown: unknown): string {
  return toSafeError(thrown, site).error.message;
}

/** Values that carry the secret in every place a thrown value can carry text. */
function throwsCarryingTheSecret(): unknown[] {
  const named = new Error(SECRET);
  named.name = `Bad ${SECRET}`;
  const coded = Object.assign(new Error(SECRET), { code: `E ${SECRET}` });
  const zod = z.object({ [SECRET]: z.string().refine(() => false, { error: () => SECRET }) }).safeParse({
    [SECRET]: SECRET,
  });
  return [
    new Error(SECRET),
    new SyntaxError(`Unexpected token, "${SECRET}" is not valid JSON`),
    named,
    coded,
    SECRET,
    { message: SECRET },
    [SECRET],
    zod.success ? null : zod.error,
    z.strictObject({}).safeParse({ [SECRET]: 1 }).error,
    z.enum(["a", "b"]).safeParse(SECRET).error,
    z.literal("x").safeParse(SECRET).error,
  ];
}

describe("toSafeError", () => {
  it("never saves any text of what was thrown, and keeps the raw text for the debug log", () => {
    for (const thrown of throwsCarryingTheSecret()) {
      const failure = toSafeError(thrown, site);
      expect(failure.error.code).toBe("node_failed");
      expect(failure.error.message.startsWith("Compute node check ")).toBe(true);
      // Record keys are paths, reported by design; the test's object key is the one allowed place.
      expect(failure.error.message.replaceAll(`.${SECRET}`, "").replaceAll(`${SECRET}:`, "")).not.toContain(
        SECRET,
      );
      expect(failure.debug).toContain("Compute node check");
    }
    expect(toSafeError(new Error(SECRET), site).debug).toContain(SECRET);
  });

  it("names the class, a system code, and a ZodError's paths and schema words", () => {
    expect(saved(new SyntaxError("x"))).toBe("Compute node check threw a SyntaxError.");
    expect(saved(new Error("x"))).toBe("Compute node check threw an Error.");
    expect(saved(Object.assign(new Error("spawn x ENOENT"), { code: "ENOENT" }))).toBe(
      "Compute node check threw an Error (ENOENT).",
    );
    expect(saved("x")).toBe("Compute node check threw a string, not an Error.");
    expect(saved(null)).toBe("Compute node check threw null, not an Error.");
    const issues = z
      .object({ items: z.array(z.object({ name: z.string(), n: z.number().min(1) })) })
      .safeParse({ items: [{ name: 3, n: 0 }] }).error;
    expect(saved(issues)).toBe(
      "Compute node check threw a ZodError: items[0].name: expected string; items[0].n: too small (at least 1).",
    );
  });

  it("saves a WorkflowError's message as written, bounded", () => {
    expect(saved(new WorkflowError("the tests failed"))).toBe("Compute node check failed: the tests failed");
    const long = saved(new WorkflowError("x".repeat(2_000)));
    expect(new TextEncoder().encode(long).byteLength).toBeLessThanOrEqual(SAFE_MESSAGE_MAX_BYTES);
  });
});
