import { chmodSync, closeSync, existsSync, mkdirSync, openSync, statSync } from "node:fs";
import { join, resolve } from "node:path";
import Database from "better-sqlite3";
import { StoreError, toStoreError } from "./errors.js";
import { SCHEMA_ID, SCHEMA_SQL } from "./schema.js";

export type SynchronousMode = "FULL" | "NORMAL";

export interface OpenDatabaseOptions {
  /** Folder for `state.db`; created 0700. */
  stateDir: string;
  /** FULL (default) survives power loss; NORMAL exists for benchmarks. */
  synchronous?: SynchronousMode;
  busyTimeoutMs?: number;
}

export const STATE_FILE_NAME = "state.db";

interface SchemaEntry {
  type: string;
  name: string;
  tbl_name: string;
  sql: string | null;
}

const SCHEMA_QUERY =
  "SELECT type, name, tbl_name, sql FROM sqlite_schema WHERE name NOT LIKE 'sqlite_%' ORDER BY type, name";

let expectedLayout: SchemaEntry[] | undefined;

/** The layout schema v1 produces, read back from SQLite itself so the comparison is exact. */
function expectedSchema(): SchemaEntry[] {
  if (!expectedLayout) {
    const db = new Database(":memory:");
    try {
      db.exec(SCHEMA_SQL);
      expectedLayout = db.prepare(SCHEMA_QUERY).all() as SchemaEntry[];
    } finally {
      db.close();
    }
  }
  return expectedLayout;
}

function resetInstruction(file: string): string {
  return `Back up ${file} (with any -wal/-shm files beside it) if you need its run history, then remove it; piw creates a new state database on the next start.`;
}

/** Owned by this user and not readable by anyone else; we tighten modes we own, refuse others. */
function ensurePrivate(path: string, mode: number): void {
  const stat = statSync(path);
  const uid = process.getuid?.();
  if (uid !== undefined && stat.uid !== uid) {
    throw new StoreError("insecure_path", `${path} belongs to another user; piw keeps its state private.`);
  }
  if ((stat.mode & 0o777) !== mode) chmodSync(path, mode);
}

function describeMismatch(actual: SchemaEntry[], expected: SchemaEntry[]): string {
  const want = new Map(expected.map((e) => [`${e.type} ${e.name}`, e.sql]));
  const have = new Map(actual.map((e) => [`${e.type} ${e.name}`, e.sql]));
  for (const [key, sql] of want) {
    if (!have.has(key)) return `missing ${key}`;
    if (have.get(key) !== sql) return `${key} differs`;
  }
  for (const key of have.keys()) if (!want.has(key)) return `unexpected ${key}`;
  return "schema id differs";
}

/**
 * Read-only inspection: returns "empty" for a new file, "ok" for schema v1, or throws a layout error.
 * Nothing here writes, so a refused file stays byte-identical.
 */
function inspect(file: string): "empty" | "ok" {
  let db: Database.Database | undefined;
  try {
    db = new Database(file, { readonly: true, fileMustExist: true });
    const actual = db.prepare(SCHEMA_QUERY).all() as SchemaEntry[];
    if (actual.length === 0) return "empty";
    const expected = expectedSchema();
    const sameTables =
      actual.length === expected.length &&
      actual.every((e, i) => {
        const x = expected[i];
        return (
          x !== undefined &&
          e.type === x.type &&
          e.name === x.name &&
          e.tbl_name === x.tbl_name &&
          e.sql === x.sql
        );
      });
    const schemaId = sameTables
      ? (db.prepare("SELECT value FROM piw_meta WHERE key = 'schema'").get() as { value: string } | undefined)
      : undefined;
    if (!sameTables || schemaId?.value !== SCHEMA_ID) {
      throw new StoreError(
        "layout_mismatch",
        `${file} does not have the piw state layout ${SCHEMA_ID} (${describeMismatch(actual, expected)}). ${resetInstruction(file)}`,
      );
    }
    return "ok";
  } catch (error) {
    const normalized = toStoreError(error);
    if (normalized.code === "not_a_database") {
      throw new StoreError("not_a_database", `${file} is not a SQLite database. ${resetInstruction(file)}`);
    }
    throw normalized;
  } finally {
    db?.close();
  }
}

/** Open (creating if needed) the state database with its exact layout checked before any write. */
export function openDatabase(options: OpenDatabaseOptions): { db: Database.Database; file: string } {
  const stateDir = resolve(options.stateDir);
  const file = join(stateDir, STATE_FILE_NAME);
  try {
    mkdirSync(stateDir, { recursive: true, mode: 0o700 });
    ensurePrivate(stateDir, 0o700);
    if (!existsSync(file)) closeSync(openSync(file, "wx", 0o600));
    ensurePrivate(file, 0o600);
  } catch (error) {
    if (error instanceof StoreError) throw error;
    throw new StoreError("store_failed", `The state directory ${stateDir} could not be prepared.`);
  }

  const state = inspect(file);
  let db: Database.Database | undefined;
  try {
    db = new Database(file, { fileMustExist: true });
    db.pragma("journal_mode = WAL");
    db.pragma(`synchronous = ${options.synchronous ?? "FULL"}`);
    db.pragma(`busy_timeout = ${Math.max(0, Math.trunc(options.busyTimeoutMs ?? 5000))}`);
    db.pragma("foreign_keys = ON");
    if (state === "empty") {
      const conn = db;
      conn
        .transaction(() => {
          const count = conn.prepare("SELECT count(*) AS n FROM sqlite_schema").get() as { n: number };
          if (count.n !== 0) return;
          conn.exec(SCHEMA_SQL);
          conn.prepare("INSERT INTO piw_meta (key, value) VALUES ('schema', ?)").run(SCHEMA_ID);
        })
        .immediate();
    }
    return { db, file };
  } catch (error) {
    db?.close();
    throw toStoreError(error);
  }
}
