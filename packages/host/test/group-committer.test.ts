import { mkdtempSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Fence } from "@piw/protocol";
import { type OpenStoreOptions, RunStore, StoreError } from "@piw/store";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { GroupCommitter } from "../src/group-committer.js";
import { runningRun, saved } from "./store-file.js";
import { removeTree } from "@piw/test-kit";

let dir: string;
let store: RunStore;
const open = (extra: Partial<OpenStoreOptions> = {}) =>
  RunStore.open({ stateDir: join(dir, "state"), ...extra });
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "piw-group-"));
  store = open();
});
afterEach(() => {
  store.close();
  removeTree(dir);
});

/** A run reserved, claimed and marked running, as its worker's fence sees it. */
const running = (runId: string): Fence => runningRun(store, runId, { manifest: { nodes: ["a"] } });

const start = (fence: Fence) => () =>
  store.startNodeVisit(fence, { path: "a", visit: 1, nodeKind: "compute" });

const steps = (runId: string) => store.listRunSteps(runId).map((s) => `${s.path}:${s.status}`);

interface Observed {
  groups: number[];
  /** Each runChanged call, with the steps the store already showed for that run. */
  changed: Array<{ runId: string; steps: string[] }>;
}

function committer(enabled = true): { committer: GroupCommitter; seen: Observed } {
  const seen: Observed = { groups: [], changed: [] };
  return {
    seen,
    committer: new GroupCommitter({
      store,
      enabled,
      runChanged: (runId) => seen.changed.push({ runId, steps: steps(runId) }),
      committed: (requests) => seen.groups.push(requests),
    }),
  };
}

describe("GroupCommitter", () => {
  it("commits the writes that arrive in one turn together, and resolves each only after the commit", async () => {
    const [a, b, c] = ["gc-a", "gc-b", "gc-c"].map(running) as [Fence, Fence, Fence];
    const { committer: group, seen } = committer();
    const replies = [a, b, c].map((fence) => group.submit(fence.runId, start(fence)));
    // Queued, not yet applied: nothing may be replied before the commit.
    expect(group.pending).toBe(3);
    expect(steps(a.runId)).toEqual([]);
    const results = await Promise.all(replies);
    expect(results.map((r) => r.kind)).toEqual(["applied", "applied", "applied"]);
    expect(seen.groups).toEqual([3]);
    // One reconcile and view per run, after the commit (the store shows the write by then).
    expect(seen.changed).toEqual([a, b, c].map((f) => ({ runId: f.runId, steps: ["a:running"] })));
  });

  it("keeps a conflict and a throw to their own requests", async () => {
    const [a, b, c] = ["gc-a", "gc-b", "gc-c"].map(running) as [Fence, Fence, Fence];
    const { committer: group, seen } = committer();
    const ok = group.submit(a.runId, start(a));
    const stale = group.submit(b.runId, start({ ...b, claimToken: "someone-else" }));
    const thrown = group.submit(c.runId, () => {
      saved(start(c)());
      return store.finishNodeVisit(c, {
        path: "a",
        visit: 1,
        result: { status: "succeeded", output: "z".repeat(2 * 1024 * 1024), next: null },
      });
    });
    const after = group.submit(a.runId, () =>
      store.finishNodeVisit(a, {
        path: "a",
        visit: 1,
        result: { status: "succeeded", output: 1, next: null },
      }),
    );
    expect((await ok).kind).toBe("applied");
    const refused = await stale;
    expect(refused.kind === "conflict" && refused.evidence.kind).toBe("stale_fence");
    await expect(thrown).rejects.toMatchObject({ code: "payload_too_large" });
    expect((await after).kind).toBe("applied");
    expect(seen.groups).toEqual([4]);
    expect([steps(a.runId), steps(b.runId), steps(c.runId)]).toEqual([["a:succeeded"], [], []]);
  });

  it("rejects every request of a group whose transaction is lost to a full disk, and saves nothing", async () => {
    const fences = ["gc-a", "gc-b", "gc-c"].map(running) as [Fence, Fence, Fence];
    // Closing folds the WAL into the file, whose size is then its page count: the cap is set there.
    store.close();
    store = open({ maxPageCount: statSync(join(dir, "state", "state.db")).size / 4096 });
    const before = fences.map((f) => ({ run: store.getRun(f.runId), steps: steps(f.runId) }));
    const { committer: group, seen } = committer();
    const [a, b, c] = fences;
    const replies = [
      group.submit(a.runId, start(a)),
      group.submit(b.runId, () => {
        saved(start(b)());
        return store.finishNodeVisit(b, {
          path: "a",
          visit: 1,
          result: { status: "succeeded", output: "y".repeat(512 * 1024), next: null },
        });
      }),
      group.submit(c.runId, start(c)),
    ];
    const settled = await Promise.allSettled(replies);
    for (const outcome of settled) {
      expect(outcome.status).toBe("rejected");
      const error = (outcome as PromiseRejectedResult).reason;
      expect(error).toBeInstanceOf(StoreError);
      expect((error as StoreError).code).toBe("store_failed");
    }
    expect(seen.groups).toEqual([3]);
    expect(fences.map((f) => ({ run: store.getRun(f.runId), steps: steps(f.runId) }))).toEqual(before);
  });

  it("splits a queue longer than one group into several commits, in order", async () => {
    const fences = Array.from({ length: 5 }, (_, i) => running(`gc-${i}`));
    const seen: number[] = [];
    const group = new GroupCommitter({
      store,
      enabled: true,
      maxGroup: 2,
      runChanged: () => {},
      committed: (n) => seen.push(n),
    });
    const results = await Promise.all(fences.map((f) => group.submit(f.runId, start(f))));
    expect(results.every((r) => r.kind === "applied")).toBe(true);
    expect(seen).toEqual([2, 2, 1]);
  });

  it("off: applies each write the moment it is submitted, one commit each", async () => {
    const [a, b] = ["gc-a", "gc-b"].map(running) as [Fence, Fence];
    const { committer: single, seen } = committer(false);
    const first = single.submit(a.runId, start(a));
    expect(steps(a.runId)).toEqual(["a:running"]);
    const second = single.submit(b.runId, start(b));
    expect((await first).kind).toBe("applied");
    expect((await second).kind).toBe("applied");
    expect(seen.groups).toEqual([]);
    expect(seen.changed.map((c) => c.runId)).toEqual([a.runId, b.runId]);
  });
});
