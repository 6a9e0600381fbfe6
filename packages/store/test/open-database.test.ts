import { createHash } from "node:crypto";
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { RunStore, SCHEMA_ID, StoreError } from "../src/index.js";
import { openTunedStore } from "../src/testing.js";
import { SCHEMA_SQL } from "../src/schema.js";

let root: string;
beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), "piw-open-"));
});
afterEach(() => rmSync(root, { recursive: true, force: true, maxRetries: 20, retryDelay: 100 }));

const digest = (file: string) => createHash("sha256").update(readFileSync(file)).digest("hex");
const mode = (path: string) => statSync(path).mode & 0o777;

function expectStoreError(fn: () => unknown, code: string): StoreError {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(StoreError);
    expect((error as StoreError).code).toBe(code);
    return error as StoreError;
  }
  throw new Error(`expected StoreError ${code}`);
}

/** Write a database whose layout differs from v1 in one way, as an older alpha build would have. */
function writeDatabase(file: string, sql: string, meta: string | null = SCHEMA_ID): void {
  const db = new Database(file);
  db.exec(sql);
  if (meta !== null) db.prepare("INSERT INTO piw_meta (key, value) VALUES ('schema', ?)").run(meta);
  db.close();
}

describe("opening the state database", () => {
  it("creates a private directory and file, in WAL mode with synchronous FULL by default", () => {
    const dir = join(root, "state");
    const store = RunStore.open({ stateDir: dir });
    expect(mode(dir)).toBe(0o700);
    expect(mode(store.file)).toBe(0o600);
    expect(store.settings()).toEqual({ journalMode: "wal", synchronous: "FULL", foreignKeys: true });
    store.close();
    const reopened = openTunedStore({ stateDir: dir, synchronous: "NORMAL" });
    expect(reopened.settings().synchronous).toBe("NORMAL");
    reopened.close();
  });

  it("tightens a state directory and file that it owns but that others could read", () => {
    const dir = join(root, "loose");
    mkdirSync(dir, { mode: 0o755 });
    chmodSync(dir, 0o755);
    RunStore.open({ stateDir: dir }).close();
    chmodSync(join(dir, "state.db"), 0o644);
    const store = RunStore.open({ stateDir: dir });
    expect(mode(dir)).toBe(0o700);
    expect(mode(store.file)).toBe(0o600);
    store.close();
  });

  it("refuses a file with another layout, names it, says to back it up, and leaves it byte-identical", () => {
    const dir = join(root, "old");
    mkdirSync(dir, { mode: 0o700 });
    const file = join(dir, "state.db");
    writeDatabase(file, SCHEMA_SQL.replace("  presentation_error TEXT,\n", ""));
    const before = digest(file);
    const error = expectStoreError(() => RunStore.open({ stateDir: dir }), "layout_mismatch");
    expect(error.message).toContain(file);
    expect(error.message).toContain("Back up");
    expect(error.message).toContain("table runs differs");
    expect(digest(file)).toBe(before);
    expect(existsSync(`${file}-wal`)).toBe(false);
  });

  it("refuses a file from before request keys (no runs.request_key, no runs_request_key)", () => {
    const dir = join(root, "before-keys");
    mkdirSync(dir, { mode: 0o700 });
    const file = join(dir, "state.db");
    const older = SCHEMA_SQL.replace("  request_key TEXT,\n", "").replace(
      /CREATE UNIQUE INDEX runs_request_key[^;]*;\n/,
      "",
    );
    expect(older).not.toContain("request_key");
    writeDatabase(file, older);
    const before = digest(file);
    const error = expectStoreError(() => RunStore.open({ stateDir: dir }), "layout_mismatch");
    expect(error.message).toContain("missing index runs_request_key");
    expect(digest(file)).toBe(before);
  });

  it("refuses a file from before the durable clock (no wake_at, due_at, failed_attempts, runs_wake)", () => {
    const dir = join(root, "before-clock");
    mkdirSync(dir, { mode: 0o700 });
    const file = join(dir, "state.db");
    const older = SCHEMA_SQL.replace("  wake_at INTEGER,\n", "")
      .replace("  due_at INTEGER,\n", "")
      .replace("  failed_attempts INTEGER NOT NULL DEFAULT 0,\n", "")
      .replace(/CREATE INDEX runs_wake[^;]*;\n/, "");
    expect(older).not.toMatch(/wake_at|due_at|failed_attempts/);
    writeDatabase(file, older);
    const before = digest(file);
    const error = expectStoreError(() => RunStore.open({ stateDir: dir }), "layout_mismatch");
    expect(error.message).toContain("missing index runs_wake");
    expect(error.message).toContain("Back up");
    expect(digest(file)).toBe(before);
  });

  it("refuses an extra index, a missing table and another schema id", () => {
    const cases: Array<[string, string, string | null, string]> = [
      [
        "extra-index",
        `${SCHEMA_SQL}\nCREATE INDEX extra ON runs (workflow_name);`,
        SCHEMA_ID,
        "unexpected index extra",
      ],
      ["missing-table", SCHEMA_SQL.replace(/CREATE TABLE worker_launches[\s\S]*$/, ""), SCHEMA_ID, "missing"],
      ["other-id", SCHEMA_SQL, "piw.state.v0", "schema id differs"],
      ["foreign", "CREATE TABLE something (x INTEGER) STRICT;", null, "missing"],
    ];
    for (const [name, sql, meta, detail] of cases) {
      const dir = join(root, name);
      mkdirSync(dir, { mode: 0o700 });
      const file = join(dir, "state.db");
      writeDatabase(file, sql, meta === null ? null : meta);
      const before = digest(file);
      const error = expectStoreError(() => RunStore.open({ stateDir: dir }), "layout_mismatch");
      expect(error.message).toContain(detail);
      expect(digest(file)).toBe(before);
    }
  });

  it("refuses a file that is not a database and leaves it untouched", () => {
    const dir = join(root, "garbage");
    mkdirSync(dir, { mode: 0o700 });
    const file = join(dir, "state.db");
    writeFileSync(
      file,
      "this is not sqlite, just some text that is long enough to look like a header".repeat(20),
      {
        mode: 0o600,
      },
    );
    const before = digest(file);
    const error = expectStoreError(() => RunStore.open({ stateDir: dir }), "not_a_database");
    expect(error.message).toContain(file);
    expect(digest(file)).toBe(before);
  });

  it("initialises an existing empty file", () => {
    const dir = join(root, "empty");
    mkdirSync(dir, { mode: 0o700 });
    writeFileSync(join(dir, "state.db"), "", { mode: 0o600 });
    const store = RunStore.open({ stateDir: dir });
    expect(store.listRuns()).toEqual([]);
    store.close();
  });

  it("refuses use after close with a typed error", () => {
    const store = RunStore.open({ stateDir: join(root, "closed") });
    store.close();
    expectStoreError(() => store.listRuns(), "store_closed");
  });
});
