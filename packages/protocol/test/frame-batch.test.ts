import { setImmediate as nextTurn } from "node:timers/promises";
import { describe, expect, it } from "vitest";
import { frameBatch } from "../src/index.js";

function recorder() {
  const writes: string[] = [];
  return { writes, batch: frameBatch((text) => writes.push(text)) };
}

describe("frameBatch", () => {
  it("writes the frames of one turn once, in the order they were sent", async () => {
    const { writes, batch } = recorder();
    batch.send("a\n");
    batch.send("b\n");
    // Promise jobs of the same turn join the same write: a group commit's replies resolve this way.
    await Promise.resolve();
    batch.send("c\n");
    await Promise.resolve().then(() => batch.send("d\n"));
    expect(writes).toEqual([]);
    await nextTurn();
    expect(writes).toEqual(["a\nb\nc\nd\n"]);
  });

  it("writes each turn's frames separately", async () => {
    const { writes, batch } = recorder();
    batch.send("one\n");
    await nextTurn();
    batch.send("two\n");
    batch.send("three\n");
    await nextTurn();
    expect(writes).toEqual(["one\n", "two\nthree\n"]);
  });

  it("flush writes what is queued at once, and the scheduled write then has nothing left", async () => {
    const { writes, batch } = recorder();
    batch.send("x\n");
    batch.flush();
    expect(writes).toEqual(["x\n"]);
    batch.flush();
    await nextTurn();
    expect(writes).toEqual(["x\n"]);
    // A frame sent after a flush in the same turn still leaves, in a write of its own.
    batch.send("y\n");
    batch.flush();
    batch.send("z\n");
    await nextTurn();
    expect(writes).toEqual(["x\n", "y\n", "z\n"]);
  });
});
