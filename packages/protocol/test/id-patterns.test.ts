import { describe, expect, it } from "vitest";
import { nodePathSchema, opaqueIdSchema, runIdSchema } from "../src/ids.js";

// packages/state-dir/test/one-owner.test.ts checks that no other file spells these patterns.
describe("the ID patterns", () => {
  it("keep the schemas' rules", () => {
    expect(runIdSchema.safeParse("hello-m3x1-4f2a").success).toBe(true);
    expect(runIdSchema.safeParse("-hello").success).toBe(false);
    expect(runIdSchema.safeParse("a".repeat(201)).success).toBe(false);
    expect(nodePathSchema.safeParse("documentation/workspace/inspect").success).toBe(true);
    expect(nodePathSchema.safeParse("a//b").success).toBe(false);
    expect(opaqueIdSchema.safeParse("msg:run:a/b:1:step").success).toBe(true);
    expect(opaqueIdSchema.safeParse("has space").success).toBe(false);
  });
});
