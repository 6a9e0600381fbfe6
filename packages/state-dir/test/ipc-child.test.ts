import { existsSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { askIpcChild } from "../src/index.js";
import { removeTree } from "@piw/test-kit";

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "piw-ipc-child-"));
});
afterEach(() => removeTree(dir));

function ask(script: string, timeoutMs = 10_000) {
  const file = join(dir, "child.cjs");
  writeFileSync(file, script);
  return askIpcChild({
    command: [process.execPath, file],
    cwd: dir,
    env: process.env,
    timeoutMs,
    request: { requestId: "r1" },
    answers: (raw) => typeof raw === "object" && raw !== null && "requestId" in raw && raw.requestId === "r1",
  });
}

describe("askIpcChild", () => {
  it("reads an answer sent right before the child exits, however large", async () => {
    // The answer is still in the channel when the child's `exit` is seen; only `close` waits for it.
    const outcome = await ask(`process.on("message", (m) => {
      process.send({ requestId: m.requestId, body: "x".repeat(4 * 1024 * 1024) }, () => process.exit(0));
    });`);
    expect(outcome.kind).toBe("replied");
  });

  it("passes over messages that do not answer the request", async () => {
    const outcome = await ask(`process.on("message", (m) => {
      process.send({ requestId: "other" });
      process.send({ hello: true });
      setTimeout(() => process.send({ requestId: m.requestId, answer: 42 }), 20);
    });`);
    expect(outcome).toEqual({ kind: "replied", message: { requestId: "r1", answer: 42 } });
  });

  it("reports a child that ends without an answer", async () => {
    const outcome = await ask("process.exit(3);");
    expect(outcome).toEqual({ kind: "exited", exitCode: 3, signal: null });
  });

  it("kills a child that does not answer in time", async () => {
    const outcome = await ask("setInterval(() => {}, 1000);", 300);
    expect(outcome).toEqual({ kind: "timed_out", timeoutMs: 300 });
  });

  it("takes an answer that came in time while this process was too busy to read it", async () => {
    // A host firing many schedules at once can hold its loop past a child's time limit; the child's
    // answer waiting in the pipe must win over the expired timer.
    const sent = join(dir, "sent");
    const started = Date.now();
    const outcome = ask(
      `process.on("message", (m) => process.send({ requestId: m.requestId, answer: 1 }, () => {
        require("node:fs").writeFileSync(${JSON.stringify(sent)}, "");
        setInterval(() => {}, 1000);
      }));`,
      300,
    );
    // Busy, not sleeping: the loop reads nothing until the answer is sent and the limit has passed.
    while (!existsSync(sent) && Date.now() - started < 20_000) {}
    while (Date.now() - started < 600) {}
    expect(existsSync(sent)).toBe(true);
    expect(await outcome).toEqual({ kind: "replied", message: { requestId: "r1", answer: 1 } });
  });

  it("reports a command that cannot start", async () => {
    const outcome = await askIpcChild({
      command: [join(dir, "missing")],
      cwd: dir,
      env: process.env,
      timeoutMs: 1000,
      request: {},
      answers: () => true,
    });
    expect(outcome.kind).toBe("spawn_failed");
  });
});
