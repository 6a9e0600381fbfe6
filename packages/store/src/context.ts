import type { Conflict, Fence, JsonValue } from "@piw/protocol";
import type Database from "better-sqlite3";
import { canonicalJson, sha256 } from "./canonical-json.js";
import { StoreError, toStoreError } from "./errors.js";
import type { RunRow } from "./rows.js";

export type MediaType = "application/json" | "text/plain";

export interface StoreLimits {
  /** Largest blob accepted, in bytes of UTF-8. */
  maxBlobBytes: number;
}

type SqlValue = string | number | null;

/** One trace event appended in the same transaction as the change it records. */
export interface EventSpec {
  type: string;
  path?: string | null;
  visit?: number | null;
  data?: Record<string, JsonValue> | null;
}

const MAX_EVENT_DATA_BYTES = 4096;

/**
 * The shared machinery of every store operation: cached statements, IMMEDIATE transactions,
 * blobs, and the one guarded update that moves a run's revision.
 */
export class StoreContext {
  private readonly statements = new Map<string, Database.Statement>();
  /** One reusable BEGIN IMMEDIATE runner: `db.transaction(fn)` builds four wrapper functions per call. */
  private readonly immediate: (fn: () => unknown) => unknown;

  constructor(
    readonly db: Database.Database,
    readonly now: () => number,
    readonly limits: StoreLimits,
  ) {
    this.immediate = db.transaction((fn: () => unknown) => fn()).immediate;
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

  /** Read a blob, refusing one whose media type is not the expected one (the seed-000 bug). */
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

  getRunRow(runId: string): RunRow | undefined {
    return this.stmt("SELECT * FROM runs WHERE run_id = ?").get(runId) as RunRow | undefined;
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

  /**
   * The one write that moves a run: set `columns`, bump the revision (and the progress revision when
   * the change is durable progress), and append the trace event — guarded on the revision read in
   * this transaction. Returns the new revision.
   */
  bumpRun(row: RunRow, columns: Record<string, SqlValue>, event: EventSpec, progress = false): number {
    const revision = row.revision + 1;
    const now = this.now();
    const keys = Object.keys(columns).sort();
    const assignments = keys.map((k) => `${k} = ?`);
    const sql = `UPDATE runs SET ${[...assignments, "revision = ?", "updated_at = ?", ...(progress ? ["progress_revision = ?"] : [])].join(", ")} WHERE run_id = ? AND revision = ?`;
    const values: SqlValue[] = keys.map((k) => columns[k] ?? null);
    values.push(revision, now);
    if (progress) values.push(revision);
    values.push(row.run_id, row.revision);
    const result = this.stmt(sql).run(...values);
    // The revision was read inside this IMMEDIATE transaction, so a miss is a bug, not a race.
    if (result.changes !== 1) throw new StoreError("store_failed", "A guarded run update matched no row.");
    Object.assign(
      row,
      columns,
      { revision, updated_at: now },
      progress ? { progress_revision: revision } : {},
    );
    this.appendEvent(row.run_id, revision, event);
    return revision;
  }

  appendEvent(runId: string, revision: number, event: EventSpec): void {
    let data: string | null = null;
    if (event.data) {
      data = canonicalJson(event.data);
      if (Buffer.byteLength(data, "utf8") > MAX_EVENT_DATA_BYTES) data = canonicalJson({ truncated: true });
    }
    this.stmt(
      "INSERT INTO run_events (run_id, revision, type, path, visit, data, at) VALUES (?, ?, ?, ?, ?, ?, ?)",
    ).run(runId, revision, event.type, event.path ?? null, event.visit ?? null, data, this.now());
  }
}

/** The evidence for a change that needs a running run. */
export function notRunning(row: RunRow): Conflict {
  return { kind: "state_mismatch", resource: "run", id: row.run_id, expected: "running", actual: row.status };
}

export function isConflict(value: RunRow | Conflict): value is Conflict {
  return "kind" in value;
}
