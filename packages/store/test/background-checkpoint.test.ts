import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { BackgroundCheckpointer } from "../src/background-checkpoint.js";
import { openHarness, preparedRun, type StoreHarness, saved } from "./fixtures.js";

async function until(what: string, check: () => boolean, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

const size = (file: string) => statSync(file).size;

describe("background WAL checkpoints", () => {
  let h: StoreHarness | undefined;
  const scratch: string[] = [];
  afterEach(() => {
    h?.cleanup();
    h = undefined;
    for (const dir of scratch.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  it("copy committed frames into the database file from the thread; no commit checkpoints inline", async () => {
    h = openHarness({ checkpoints: "background" });
    const harness = h;
    await until("the checkpoint thread", () => harness.store.backgroundCheckpoints);
    expect(harness.store.settings().walAutocheckpoint).toBe(0);
    const file = join(harness.dir, "state.db");
    const before = size(file);
    // Well past SQLite's 1,000-page threshold, so inline checkpoints would have run by now.
    for (let i = 0; i < 1500; i++) {
      saved(
        harness.store.reservePreparedRun(
          preparedRun(`bg-${i}`, { origin: { kind: "pi", sessionId: `s-${i}` }, input: { i } }),
        ),
      );
    }
    // Only the thread can grow the database file while inline checkpoints are off.
    await until("the thread to copy the WAL into the database file", () => size(file) > before);
    await until("the thread to report a finished checkpoint", () => harness.store.checkpointsCompleted > 0);
    expect(harness.store.backgroundCheckpoints).toBe(true);
    const reopened = harness.reopen({ checkpoints: "inline" });
    expect(reopened.listRuns({ limit: 2000 })).toHaveLength(1500);
    expect(reopened.settings().walAutocheckpoint).toBe(1000);
  });

  function walDatabase(): { db: Database.Database; file: string } {
    const dir = mkdtempSync(join(tmpdir(), "piw-checkpoint-"));
    scratch.push(dir);
    const file = join(dir, "state.db");
    const db = new Database(file);
    db.pragma("journal_mode = WAL");
    db.exec("CREATE TABLE t (x INTEGER) STRICT");
    return { db, file };
  }

  it("falls back to SQLite's own checkpoints when the thread cannot start", async () => {
    const { db, file } = walDatabase();
    const why: string[] = [];
    const checkpointer = new BackgroundCheckpointer(db, file, "FULL", {
      threadSource: "throw new Error('no thread today')",
      onFallback: (reason) => why.push(reason),
    });
    await until("the fallback", () => why.length > 0);
    expect(why).toEqual(["the checkpoint thread failed (Error)"]);
    expect(checkpointer.active).toBe(false);
    expect(db.pragma("wal_autocheckpoint", { simple: true })).toBe(1000);
    checkpointer.close();
    db.close();
  });

  it("falls back when a checkpoint fails for another reason than a busy database", async () => {
    const { db, file } = walDatabase();
    const why: string[] = [];
    const checkpointer = new BackgroundCheckpointer(db, file, "FULL", {
      intervalMs: 10,
      threadSource: `
const { parentPort } = require("node:worker_threads");
parentPort.on("message", () => parentPort.postMessage({ kind: "failed", code: "SQLITE_IOERR" }));
parentPort.postMessage({ kind: "ready" });`,
      onFallback: (reason) => why.push(reason),
    });
    await until("the thread to be ready", () => checkpointer.active);
    expect(db.pragma("wal_autocheckpoint", { simple: true })).toBe(0);
    db.prepare("INSERT INTO t VALUES (1)").run();
    checkpointer.noteCommit();
    await until("the fallback", () => why.length > 0);
    expect(why).toEqual(["a background checkpoint failed (SQLITE_IOERR)"]);
    expect(db.pragma("wal_autocheckpoint", { simple: true })).toBe(1000);
    checkpointer.close();
    db.close();
  });

  it("asks for no checkpoint while nothing was committed", async () => {
    const { db, file } = walDatabase();
    const checkpointer = new BackgroundCheckpointer(db, file, "FULL", { intervalMs: 10 });
    // Few commits: the interval, not the commit count, starts the checkpoint.
    await until("the thread to be ready", () => checkpointer.active);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(checkpointer.completed).toBe(0);
    db.prepare("INSERT INTO t VALUES (1)").run();
    checkpointer.noteCommit();
    await until("one checkpoint", () => checkpointer.completed === 1);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(checkpointer.completed).toBe(1);
    checkpointer.close();
    db.close();
  });

  it("starts a checkpoint at once after enough commits, without waiting for the interval", async () => {
    const { db, file } = walDatabase();
    const checkpointer = new BackgroundCheckpointer(db, file, "FULL", {
      intervalMs: 60_000,
      commitsPerCheckpoint: 5,
    });
    await until("the thread to be ready", () => checkpointer.active);
    const insert = db.prepare("INSERT INTO t VALUES (?)");
    for (let i = 0; i < 4; i++) {
      insert.run(i);
      checkpointer.noteCommit();
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(checkpointer.completed).toBe(0);
    insert.run(4);
    checkpointer.noteCommit();
    await until("the checkpoint the fifth commit asked for", () => checkpointer.completed === 1);
    checkpointer.close();
    db.close();
  });
});
