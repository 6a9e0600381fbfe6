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
import type { RunRow } from "./rows.js";

export type MediaType = "application/json" | "text/plain";

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
