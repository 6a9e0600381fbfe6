import {
  confirmSameFile,
  createPrivateFile,
  type FileIdentity,
  prepareStateDir,
  STATE_DB_NAME,
  STATE_DB_SIDE_SUFFIXES,
  StateDirRefused,
  securePrivateFile,
} from "@piw/state-dir";
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
  /**
   * A cap on the database's size in pages (SQLite's `max_page_count`): a write past it fails as a full
   * disk would. Off by default; tests use it to fill the "disk" for real.
   */
  maxPageCount?: number;
}

export const STATE_FILE_NAME = STATE_DB_NAME;

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

/**
 * The -wal/-shm/-journal files hold committed data too: each must be this user's own regular file,
 * never a link that would make SQLite write elsewhere.
 */
function secureSideFiles(file: string): void {
  for (const suffix of STATE_DB_SIDE_SUFFIXES)
    securePrivateFile(`${file}${suffix}`, `the database's ${suffix} file`);
}

/** Run a state-file check; its refusal becomes the store's typed `insecure_path`. */
function checked<T>(stateDir: string, check: () => T): T {
  try {
    return check();
  } catch (error) {
    if (error instanceof StateDirRefused) throw new StoreError("insecure_path", error.message);
    if (error instanceof StoreError) throw error;
    throw new StoreError("store_failed", `The state directory ${stateDir} could not be prepared.`);
  }
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
  // better-sqlite3 opens by name, so every name is checked with no-follow opens first, and after
  // the open the database's name must still lead to the file that was checked.
  const { stateDir, databasePath: file } = checked(options.stateDir, () => prepareStateDir(options.stateDir));
  const identity: FileIdentity = checked(stateDir, () => {
    secureSideFiles(file);
    return createPrivateFile(file, "the state database");
  });

  const state = inspect(file);
  checked(stateDir, () => confirmSameFile(file, "the state database", identity));
  let db: Database.Database | undefined;
  try {
    db = new Database(file, { fileMustExist: true });
    checked(stateDir, () => confirmSameFile(file, "the state database", identity));
    db.pragma("journal_mode = WAL");
    db.pragma(`synchronous = ${options.synchronous ?? "FULL"}`);
    db.pragma(`busy_timeout = ${Math.max(0, Math.trunc(options.busyTimeoutMs ?? 5000))}`);
    db.pragma("foreign_keys = ON");
    if (options.maxPageCount !== undefined)
      db.pragma(`max_page_count = ${Math.max(1, Math.trunc(options.maxPageCount))}`);
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
    // SQLite has created -wal and -shm by now (0600, like the database); they must be ours too.
    checked(stateDir, () => secureSideFiles(file));
    return { db, file };
  } catch (error) {
    db?.close();
    throw toStoreError(error);
  }
}
