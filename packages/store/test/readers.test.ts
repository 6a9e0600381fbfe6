import { fenceSchema, reservePreparedRunSchema, runEndingSchema, startNodeVisitSchema } from "@piw/protocol";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { StoreError } from "../src/index.js";
import {
  expectRefusedBySchema,
  openHarness,
  preparedRun,
  runningRun,
  type StoreHarness,
  saved,
} from "./fixtures.js";

let h: StoreHarness;
afterEach(() => h.cleanup());

function storeErrorOf(fn: () => unknown): StoreError {
  try {
    fn();
  } catch (error) {
    if (error instanceof StoreError) return error;
    throw new Error(`expected a StoreError, got ${String(error)}`);
  }
  throw new Error("expected a StoreError, got no error");
}

describe("typed run readers", () => {
  it("read input and output as JSON and errors and instructions as text", () => {
    h = openHarness();
    const fence = runningRun(h.store, "r-1", {
      input: { n: 1 },
      presentationInstructions: "Summarise {not json",
    });
    saved(h.store.startNodeVisit(fence, { path: "a", visit: 1, nodeKind: "compute" }));
    saved(
      h.store.finishRun(fence, {
        outcome: "failed",
        error: { code: "node_failed", message: "exit 3: {oops" },
      }),
    );
    expect(h.store.readRunInput("r-1")).toEqual({ kind: "saved", value: { n: 1 } });
    expect(h.store.readRunFinalOutput("r-1")).toBeNull();
    expect(h.store.readRunError("r-1")).toEqual({ code: "node_failed", message: "exit 3: {oops" });
    expect(h.store.readPresentationInstructions("r-1")).toBe("Summarise {not json");
  });

  it("say a run is not terminal instead of inventing facts", () => {
    h = openHarness();
    runningRun(h.store, "r-2");
    expect(h.store.readTerminalFacts("r-2")).toEqual({ kind: "not_terminal", status: "running" });
  });

  it("refuse unknown run IDs with a typed not_found error", () => {
    h = openHarness();
    for (const read of [
      () => h.store.readRunInput("nope"),
      () => h.store.readRunFinalOutput("nope"),
      () => h.store.readRunError("nope"),
      () => h.store.readPresentationInstructions("nope"),
      () => h.store.readTerminalFacts("nope"),
    ]) {
      expect(storeErrorOf(read).code).toBe("not_found");
    }
    expect(h.store.getRun("nope")).toBeNull();
  });
});

describe("bad input changes nothing", () => {
  it("rejects an oversized input with payload_too_large and saves no run", () => {
    h = openHarness({ maxBlobBytes: 1024 });
    const error = storeErrorOf(() =>
      h.store.reservePreparedRun(preparedRun("big-1", { input: { blob: "x".repeat(2000) } })),
    );
    expect(error.code).toBe("payload_too_large");
    expect(error.message).not.toContain("xxxx");
    expect(h.store.getRun("big-1")).toBeNull();
    expect(h.store.listRuns()).toEqual([]);
  });

  it("rejects an oversized node output and leaves the visit open", () => {
    h = openHarness({ maxBlobBytes: 1024 });
    const fence = runningRun(h.store, "big-2");
    saved(h.store.startNodeVisit(fence, { path: "a", visit: 1, nodeKind: "compute" }));
    const revision = h.store.getRun("big-2")?.revision;
    const error = storeErrorOf(() =>
      h.store.finishNodeVisit(fence, {
        path: "a",
        visit: 1,
        result: { status: "succeeded", output: "y".repeat(5000), next: null },
      }),
    );
    expect(error.code).toBe("payload_too_large");
    expect(h.store.getRun("big-2")?.revision).toBe(revision);
    expect(h.store.listRunSteps("big-2")).toMatchObject([{ path: "a", status: "running" }]);
  });

  it("leaves malformed records to the protocol schemas, which refuse them before the store", () => {
    const fence = { runId: "ok", generation: 1, claimToken: "t" };
    expectRefusedBySchema(reservePreparedRunSchema, { ...preparedRun("ok"), runId: "has spaces and SECRET" });
    expectRefusedBySchema(reservePreparedRunSchema, { ...preparedRun("ok"), origin: { kind: "pi" } });
    expectRefusedBySchema(reservePreparedRunSchema, null);
    expectRefusedBySchema(fenceSchema, { ...fence, generation: -1 });
    expectRefusedBySchema(startNodeVisitSchema, { path: "../etc", visit: 1, nodeKind: "compute" });
    expectRefusedBySchema(runEndingSchema, { outcome: "exploded" });
  });

  it("turns a database locked by another writer into a typed store_busy error", () => {
    h = openHarness({ busyTimeoutMs: 50 });
    const other = new Database(h.store.file);
    other.exec("BEGIN IMMEDIATE");
    try {
      const error = storeErrorOf(() => h.store.reservePreparedRun(preparedRun("busy-1")));
      expect(error.code).toBe("store_busy");
      expect(error.message).not.toMatch(/SQLITE|INSERT|SELECT/);
    } finally {
      other.exec("ROLLBACK");
      other.close();
    }
    expect(saved(h.store.reservePreparedRun(preparedRun("busy-1"))).status).toBe("queued");
  });
});

describe("working directory", () => {
  it("is saved with the run and carried to a restart", () => {
    h = openHarness();
    const fence = runningRun(h.store, "wd-1", { workingDir: "/projects/demo" });
    expect(h.store.getRun("wd-1")?.workingDir).toBe("/projects/demo");
    saved(h.store.startNodeVisit(fence, { path: "a", visit: 1, nodeKind: "compute" }));
    saved(h.store.finishRun(fence, { outcome: "failed", error: { code: "node_failed", message: "boom" } }));
    saved(h.store.prepareRestart({ runId: "wd-1-r1", parentRunId: "wd-1" }));
    expect(h.store.getRun("wd-1-r1")?.workingDir).toBe("/projects/demo");
  });
});

describe("reads that grow with the store", () => {
  /** Every SQL text the store prepares while `read` runs, on a store opened inside it. */
  function preparedDuring(read: () => void): string[] {
    const seen: string[] = [];
    const prepare = Database.prototype.prepare;
    Database.prototype.prepare = function (this: Database.Database, source: string) {
      seen.push(source);
      return prepare.call(this, source);
    } as typeof prepare;
    try {
      read();
    } finally {
      Database.prototype.prepare = prepare;
    }
    return seen;
  }

  it("take the run list's page, the runs left to present and the open launches from an index, never a scan", () => {
    h = openHarness();
    for (let n = 0; n < 3; n += 1)
      saved(h.store.reservePreparedRun(preparedRun(`r-${n}`, { origin: { kind: "cli" } })));
    const sql = preparedDuring(() => {
      const store = h.reopen();
      expect(store.listRuns({ limit: 50 }).length).toBe(3);
      expect(store.listRunsNeedingPresentation()).toEqual([]);
      expect(store.listOpenLaunches()).toEqual([]);
    });
    const reads = sql.filter((text) =>
      /FROM (runs .*(ORDER BY created_at DESC|presentation_state IN)|worker_launches WHERE exit_decision IS NULL)/s.test(
        text,
      ),
    );
    expect(reads.length).toBe(3);
    const db = new Database(join(h.dir, "state.db"), { readonly: true });
    try {
      for (const text of reads) {
        const plan = (db.prepare(`EXPLAIN QUERY PLAN ${text}`).all() as Array<{ detail: string }>).map(
          (row) => row.detail,
        );
        // A page of 50 out of 10,000 runs must not read and sort all 10,000.
        expect(plan.join("; "), text).not.toMatch(/SCAN (runs|worker_launches)(;|$)|TEMP B-TREE/);
        expect(plan.join("; "), text).toMatch(
          /USING (COVERING )?INDEX (runs_created|runs_presentation|worker_launches_open)/,
        );
      }
    } finally {
      db.close();
    }
  });
});
