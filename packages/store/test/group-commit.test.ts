import { existsSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import type { Fence } from "@piw/protocol";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { StoreError } from "../src/index.js";
import { openHarness, runningRun, runSnapshot, type StoreHarness, saved } from "./fixtures.js";

let h: StoreHarness;
beforeEach(() => {
  h = openHarness();
});
afterEach(() => h.cleanup());

const RUNS = ["group-a", "group-b", "group-c"] as const;

function fences(): Fence[] {
  return RUNS.map((runId) => runningRun(h.store, runId, { origin: { kind: "cli" } }));
}

function startFirst(fence: Fence) {
  return () => h.store.startNodeVisit(fence, { path: "a", visit: 1, nodeKind: "compute" });
}

/** Every run's counters and steps: what a group must leave as it was when it saves nothing. */
function everything() {
  return RUNS.map((runId) => ({ ...runSnapshot(h.store, runId), steps: h.store.listRunSteps(runId) }));
}

/**
 * Commits in the WAL file since it was last reset: frames of the current WAL (salts equal to the
 * header's) whose "database size after commit" field is set. Each commit is one sync at FULL.
 */
function walCommits(): number {
  const wal = join(h.dir, "state.db-wal");
  if (!existsSync(wal)) return 0;
  const bytes = readFileSync(wal);
  if (bytes.length < 32) return 0;
  const pageSize = bytes.readUInt32BE(8);
  const salt = [bytes.readUInt32BE(16), bytes.readUInt32BE(20)];
  let commits = 0;
  for (let at = 32; at + 24 + pageSize <= bytes.length; at += 24 + pageSize) {
    if (bytes.readUInt32BE(at + 8) !== salt[0] || bytes.readUInt32BE(at + 12) !== salt[1]) break;
    if (bytes.readUInt32BE(at + 4) !== 0) commits++;
  }
  return commits;
}

describe("commitGroup", () => {
  it("gives each request its own result, all saved by one commit", () => {
    const [a, b, c] = fences() as [Fence, Fence, Fence];
    const commits = walCommits();
    const outcomes = h.store.commitGroup([startFirst(a), startFirst(b), startFirst(c)]);
    expect(outcomes.map((o) => o.ok && o.value.kind)).toEqual(["applied", "applied", "applied"]);
    expect(walCommits()).toBe(commits + 1);
    // The same three changes one by one are three commits.
    for (const fence of [a, b, c]) {
      saved(
        h.store.finishNodeVisit(fence, {
          path: "a",
          visit: 1,
          result: { status: "succeeded", output: 1, next: null },
        }),
      );
    }
    expect(walCommits()).toBe(commits + 4);
    for (const runId of RUNS) {
      expect(h.store.listRunSteps(runId).map((s) => [s.path, s.status])).toEqual([["a", "succeeded"]]);
    }
    // What was committed survives a reopen of the file.
    h.reopen();
    for (const runId of RUNS) expect(h.store.listRunSteps(runId)).toHaveLength(1);
  });

  it("keeps a conflicting request's refusal to itself: the others are saved, its change is absent", () => {
    const [a, b, c] = fences() as [Fence, Fence, Fence];
    const before = runSnapshot(h.store, b.runId);
    const stale = { ...b, claimToken: "not-the-claim" };
    const outcomes = h.store.commitGroup([startFirst(a), startFirst(stale), startFirst(c)]);
    expect(outcomes.map((o) => o.ok && o.value.kind)).toEqual(["applied", "conflict", "applied"]);
    const refused = outcomes[1];
    expect(refused?.ok && refused.value.kind === "conflict" && refused.value.evidence.kind).toBe(
      "stale_fence",
    );
    expect(runSnapshot(h.store, b.runId)).toEqual(before);
    expect(h.store.listRunSteps(a.runId)).toHaveLength(1);
    expect(h.store.listRunSteps(c.runId)).toHaveLength(1);
  });

  it("rolls back only the savepoint of a request that throws, after it wrote", () => {
    const [a, b, c] = fences() as [Fence, Fence, Fence];
    const before = runSnapshot(h.store, b.runId);
    const outcomes = h.store.commitGroup([
      startFirst(a),
      () => {
        // A request is a sequence of store calls: the first one's change must go with the throw.
        saved(startFirst(b)());
        h.store.finishNodeVisit(b, {
          path: "a",
          visit: 1,
          result: { status: "succeeded", output: "x".repeat(2 * 1024 * 1024), next: null },
        });
        throw new Error("not reached: the blob is over the limit");
      },
      startFirst(c),
    ]);
    expect(outcomes.map((o) => o.ok)).toEqual([true, false, true]);
    const failed = outcomes[1];
    expect(failed?.ok === false && failed.error).toBeInstanceOf(StoreError);
    expect(failed?.ok === false && failed.error.code).toBe("payload_too_large");
    expect(runSnapshot(h.store, b.runId)).toEqual(before);
    expect(h.store.listRunSteps(a.runId)).toHaveLength(1);
    expect(h.store.listRunSteps(c.runId)).toHaveLength(1);
  });

  it("fails every request and saves nothing when the disk is full (max_page_count)", () => {
    const all = fences();
    const [a, b, c] = all as [Fence, Fence, Fence];
    // Closing checkpoints the WAL into the file, so its size is the page count; cap it there.
    h.reopen();
    const pages = statSync(join(h.dir, "state.db")).size / 4096;
    h.reopen({ maxPageCount: pages });
    const before = everything();
    // b's node finishes with a 512 KiB output: far more pages than the cap leaves.
    const big = () => {
      saved(h.store.startNodeVisit(b, { path: "a", visit: 1, nodeKind: "compute" }));
      return h.store.finishNodeVisit(b, {
        path: "a",
        visit: 1,
        result: { status: "succeeded", output: "y".repeat(512 * 1024), next: null },
      });
    };
    const outcomes = h.store.commitGroup<unknown>([startFirst(a), big, startFirst(c)]);
    expect(outcomes.map((o) => (o.ok ? "ok" : o.error.code))).toEqual([
      "store_failed",
      "store_failed",
      "store_failed",
    ]);
    const first = outcomes[0];
    expect(first?.ok === false && first.error.message).toMatch(/full.*Nothing of this request was saved/);
    expect(everything()).toEqual(before);
    // The store still works: the same small requests commit once there is room.
    h.reopen();
    expect(h.store.commitGroup([startFirst(a), startFirst(c)]).map((o) => o.ok)).toEqual([true, true]);
  });

  it("fails the whole group when a request swallows the error that ended the transaction", () => {
    const [a, b, c] = fences() as [Fence, Fence, Fence];
    h.reopen();
    h.reopen({ maxPageCount: statSync(join(h.dir, "state.db")).size / 4096 });
    const before = everything();
    const swallowing = () => {
      try {
        saved(startFirst(b)());
        h.store.finishNodeVisit(b, {
          path: "a",
          visit: 1,
          result: { status: "succeeded", output: "y".repeat(512 * 1024), next: null },
        });
      } catch {
        return "swallowed";
      }
      return "not full";
    };
    const outcomes = h.store.commitGroup<unknown>([startFirst(a), swallowing, startFirst(c)]);
    expect(outcomes.map((o) => (o.ok ? "ok" : o.error.code))).toEqual([
      "store_failed",
      "store_failed",
      "store_failed",
    ]);
    // c did not run outside the group's transaction: nothing is saved.
    expect(everything()).toEqual(before);
  });

  it("commits a lone request as one plain transaction", () => {
    const [a] = fences() as [Fence];
    const [only] = h.store.commitGroup([startFirst(a)]);
    expect(only?.ok && only.value.kind).toBe("applied");
    expect(h.store.listRunSteps(a.runId)).toHaveLength(1);
  });
});
