import {
  type Conflict,
  conflict,
  type Fence,
  type JsonValue,
  type Transition,
  canonicalJson,
} from "@piw/protocol";
import type Database from "better-sqlite3";
import { sha256 } from "./sha256.js";
import { StoreError, toStoreError } from "./errors.js";
import { FrozenJsonCache } from "./frozen-json-cache.js";
import type { RunRow } from "./rows.js";
import type { TableName, TableRow } from "./table-columns.js";

export type MediaType = "application/json" | "text/plain";

/** The manifests' JSON text kept parsed, in UTF-16 code units: a few dozen 1,000-node manifests. */
const MANIFEST_CACHE_LENGTH = 8 * 1024 * 1024;

/** One request's own result in a group commit: its value, or the error that rolled back only its changes. */
export type GroupOutcome<T> = { ok: true; value: T } | { ok: false; error: StoreError };

export interface StoreLimits {
  /** Largest blob accepted, in bytes of UTF-8. */
  maxBlobBytes: number;
}

/**
 * The shared machinery of every store operation: cached statements, IMMEDIATE transactions, blobs
 * and fenced reads. Runs and their trace are written only by `run-writes.ts`.
 */
export class StoreContext {
  private readonly statements = new Map<string, Database.Statement>();
  /** One reusable BEGIN IMMEDIATE runner: `db.transaction(fn)` builds four wrapper functions per call. */
  private readonly immediate: (fn: () => unknown) => unknown;
  /** Inside an open transaction better-sqlite3 runs this as SAVEPOINT … RELEASE (ROLLBACK TO on a throw). */
  private readonly savepoint: (fn: () => unknown) => unknown;
  private readonly begin: Database.Statement;
  private readonly commit: Database.Statement;
  private readonly rollback: Database.Statement;
  /** Manifests of the runs being viewed: a 1,000-node manifest costs milliseconds to read and parse. */
  readonly manifests = new FrozenJsonCache(MANIFEST_CACHE_LENGTH);

  constructor(
    readonly db: Database.Database,
    readonly now: () => number,
    readonly limits: StoreLimits,
  ) {
    const runner = db.transaction((fn: () => unknown) => fn());
    this.immediate = runner.immediate;
    this.savepoint = runner.deferred;
    this.begin = db.prepare("BEGIN IMMEDIATE");
    this.commit = db.prepare("COMMIT");
    this.rollback = db.prepare("ROLLBACK");
  }

  stmt(sql: string): Database.Statement {
    let statement = this.statements.get(sql);
    if (!statement) {
      statement = this.db.prepare(sql);
      this.statements.set(sql, statement);
    }
    return statement;
  }

  /** Run `fn` in one BEGIN IMMEDIATE transaction; every failure leaves as a StoreError. */
  tx<T>(fn: () => T): T {
    try {
      return this.immediate(fn) as T;
    } catch (error) {
      throw toStoreError(error);
    }
  }

  /**
   * Group commit: every request in its own SAVEPOINT inside one BEGIN IMMEDIATE … COMMIT, so the whole
   * group costs one commit (one fsync at FULL). A request that throws rolls back its own savepoint and
   * gets its own error; the others are unaffected. When the group's transaction itself is lost (the
   * COMMIT fails, or SQLite rolled the whole transaction back after SQLITE_FULL or an I/O error), no
   * request's change was saved and every request gets that error. `ctx.tx` inside a request nests as
   * a savepoint. Requests must be synchronous and must not touch anything but the store before the
   * outcomes are returned: nothing is durable until then.
   */
  group<T>(requests: ReadonlyArray<() => T>): GroupOutcome<T>[] {
    if (requests.length === 0) return [];
    if (requests.length === 1) {
      const only = requests[0] as () => T;
      try {
        return [{ ok: true, value: this.tx(only) }];
      } catch (error) {
        return [{ ok: false, error: toStoreError(error) }];
      }
    }
    const outcomes: GroupOutcome<T>[] = [];
    let lost: StoreError | undefined;
    try {
      this.begin.run();
    } catch (error) {
      lost = toStoreError(error);
    }
    for (const request of lost ? [] : requests) {
      try {
        outcomes.push({ ok: true, value: this.savepoint(request) as T });
      } catch (error) {
        // A request that swallowed the error that ended the transaction still lands here: its
        // savepoint's RELEASE fails, so no request after it can run outside the group.
        if (!this.db.inTransaction) {
          lost = toStoreError(error);
          break;
        }
        outcomes.push({ ok: false, error: toStoreError(error) });
      }
    }
    if (!lost) {
      try {
        this.commit.run();
        return outcomes;
      } catch (error) {
        lost = toStoreError(error);
      }
    }
    if (this.db.inTransaction) {
      try {
        this.rollback.run();
      } catch {
        // SQLite rolls back a transaction it cannot keep; nothing of the group is saved either way.
      }
    }
    const error = new StoreError(lost.code, `${lost.message} Nothing of this request was saved.`);
    return requests.map(() => ({ ok: false, error }));
  }

  /** Reads need no write lock; they still normalize errors. */
  read<T>(fn: () => T): T {
    try {
      return fn();
    } catch (error) {
      throw toStoreError(error);
    }
  }

  putBlob(mediaType: MediaType, text: string): string {
    const content = Buffer.from(text, "utf8");
    if (content.byteLength > this.limits.maxBlobBytes) {
      throw new StoreError(
        "payload_too_large",
        `A ${mediaType} value of ${content.byteLength} bytes exceeds the ${this.limits.maxBlobBytes}-byte limit.`,
      );
    }
    const hash = this.hashOf(mediaType, text);
    this.stmt(
      "INSERT INTO blobs (hash, media_type, size, content, created_at) VALUES (?, ?, ?, ?, ?) ON CONFLICT (hash) DO NOTHING",
    ).run(hash, mediaType, content.byteLength, content, this.now());
    return hash;
  }

  /** The hash a value would be stored under, without storing it: comparisons must not write. */
  hashOf(mediaType: MediaType, text: string): string {
    return sha256(`${mediaType}\n${text}`);
  }

  jsonHash(value: unknown): string {
    return this.hashOf("application/json", canonicalJson(value));
  }

  textHash(text: string): string {
    return this.hashOf("text/plain", text);
  }

  putJson(value: unknown): string {
    return this.putBlob("application/json", canonicalJson(value));
  }

  putText(text: string): string {
    return this.putBlob("text/plain", text);
  }

  /** Read a blob, refusing one whose media type is not the expected one (the typed-readers rule). */
  readBlob(hash: string, expected: MediaType): string {
    const row = this.stmt("SELECT media_type, content FROM blobs WHERE hash = ?").get(hash) as
      | { media_type: MediaType; content: Buffer }
      | undefined;
    if (!row) throw new StoreError("not_found", `Blob ${hash.slice(0, 12)} is missing.`);
    if (row.media_type !== expected) {
      throw new StoreError(
        "wrong_media_type",
        `Blob ${hash.slice(0, 12)} holds ${row.media_type}, not ${expected}; it was read through the wrong reader.`,
      );
    }
    return row.content.toString("utf8");
  }

  readJsonBlob(hash: string): JsonValue {
    return JSON.parse(this.readBlob(hash, "application/json")) as JsonValue;
  }

  readTextBlob(hash: string): string {
    return this.readBlob(hash, "text/plain");
  }

  /**
   * The first row of `SELECT <table>.* FROM <table> <rest>`. The one place a row is typed: the type
   * follows the table's columns, which `row-types.test.ts` checks against the schema.
   */
  selectRow<N extends TableName>(table: N, rest: string, ...params: unknown[]): TableRow<N> | undefined {
    return this.stmt(`SELECT ${table}.* FROM ${table} ${rest}`).get(...params) as TableRow<N> | undefined;
  }

  /** Every row of `SELECT <table>.* FROM <table> <rest>`, typed as `selectRow` types one. */
  selectRows<N extends TableName>(table: N, rest: string, ...params: unknown[]): TableRow<N>[] {
    return this.stmt(`SELECT ${table}.* FROM ${table} ${rest}`).all(...params) as TableRow<N>[];
  }

  /** A row this transaction has just written: its absence is a bug in the caller, not a state. */
  writtenRow<N extends TableName>(table: N, rest: string, ...params: unknown[]): TableRow<N> {
    const row = this.selectRow(table, rest, ...params);
    if (row === undefined)
      throw new StoreError("not_found", `A ${table} row written in this transaction is missing.`);
    return row;
  }

  getRunRow(runId: string): RunRow | undefined {
    return this.selectRow("runs", "WHERE run_id = ?", runId);
  }

  /** The run a fenced caller may change, or the conflict that says why it may not. */
  fencedRun(fence: Fence): RunRow | Conflict {
    const row = this.getRunRow(fence.runId);
    if (!row) return { kind: "not_found", resource: "run", id: fence.runId };
    if (row.generation !== fence.generation || row.claim_token !== fence.claimToken) {
      return {
        kind: "stale_fence",
        runId: row.run_id,
        expectedGeneration: fence.generation,
        actualGeneration: row.generation,
        status: row.status,
      };
    }
    if (fence.expectedRevision !== undefined && fence.expectedRevision !== row.revision) {
      return {
        kind: "revision_mismatch",
        runId: row.run_id,
        expected: fence.expectedRevision,
        actual: row.revision,
      };
    }
    return row;
  }
}

/** The evidence for a change that needs a running run. */
export function notRunning(row: RunRow): Conflict {
  return { kind: "state_mismatch", resource: "run", id: row.run_id, expected: "running", actual: row.status };
}

export function isConflict(value: RunRow | Conflict): value is Conflict {
  return "kind" in value;
}

/** The running run a fenced worker may change, or the refusal to return. */
export function runningRun(ctx: StoreContext, fence: Fence): RunRow | Transition<never> {
  const row = ctx.fencedRun(fence);
  if (isConflict(row)) return conflict(row);
  if (row.status !== "running") return conflict(notRunning(row));
  return row;
}

export function isTransition(value: RunRow | Transition<never>): value is Transition<never> {
  return "kind" in value;
}
