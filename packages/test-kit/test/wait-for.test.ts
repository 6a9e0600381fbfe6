import { describe, expect, it } from "vitest";
import { waitFor } from "../src/index.ts";

describe("waitFor", () => {
  it("returns the first truthy value the check gives, sync or async", async () => {
    let calls = 0;
    expect(await waitFor("the third call", () => (++calls >= 3 ? calls : undefined))).toBe(3);
    expect(await waitFor("an async check", async () => "ready")).toBe("ready");
  });

  it("fails naming what it waited for", async () => {
    await expect(waitFor("the moon", () => false, 50)).rejects.toThrow("waiting for the moon");
  });
});
