import type { Fence } from "@piw/protocol";
import Database from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  openHarness,
  preparedRun,
  refused,
  runningRun,
  type StoreHarness,
  saved,
  startingRun,
} from "./fixtures.js";

const SECRET = { task: "deploy with token tok-SECRET-1234" };
const LEASE_MS = 30_000;

let h: StoreHarness;
beforeEach(() => {
  h = openHarness();
});
afterEach(() => h.cleanup());

/** What the file holds, read past the store's readers: no blob may still carry the secret. */
function blobsHolding(text: string): number {
  const db = new Database(h.store.file, { readonly: true });
  try {
    const rows = db.prepare("SELECT content FROM blobs").all() as { content: Buffer }[];
    return rows.filter((row) => row.content.toString("utf8").includes(text)).length;
  } finally {
    db.close();
  }
}

/** The worker's launch failure: the workflow file is gone or changed, so the run fails through its fence. */
function failLaunch(fence: Fence, code: "workflow_not_found" | "source_changed"): void {
  const message = "Workflow file /tmp/demo.workflow.ts is gone or changed.";
  saved(h.store.finishRun(fence, { outcome: "failed", error: { code, message } }));
}

function expectCleared(runId: string): void {
  expect(h.store.readRunInput(runId)).toEqual({ kind: "cleared" });
  expect(blobsHolding("tok-SECRET-1234")).toBe(0);
}

describe("a launch that ends before it ran clears its private input", () => {
  it("a queued run keeps its input until then", () => {
    saved(h.store.reservePreparedRun(preparedRun("r-1", { input: SECRET })));
    expect(h.store.readRunInput("r-1")).toEqual({ kind: "saved", value: SECRET });
    expect(blobsHolding("tok-SECRET-1234")).toBe(1);
  });

  it("failed activation: the worker's launch failure from starting", () => {
    const { fence } = startingRun(h.store, "r-1", { input: SECRET });
    failLaunch(fence, "workflow_not_found");
    expect(h.store.getRun("r-1")?.status).toBe("failed");
    expectCleared("r-1");
  });

  it("cancel while queued", () => {
    saved(h.store.reservePreparedRun(preparedRun("r-1", { input: SECRET })));
    saved(h.store.cancelRun({ runId: "r-1" }));
    expectCleared("r-1");
  });

  it("cancel while starting", () => {
    startingRun(h.store, "r-1", { input: SECRET });
    saved(h.store.cancelRun({ runId: "r-1" }));
    expectCleared("r-1");
  });

  it("an expired starting claim requeues, and the next activation fails on the changed source", () => {
    startingRun(h.store, "r-1", { input: SECRET });
    h.clock.now += LEASE_MS + 1;
    saved(h.store.recoverExpiredStarting({ runId: "r-1" }));
    expect(h.store.getRun("r-1")?.status).toBe("queued");
    // Still queued: the input is kept for the next activation.
    expect(h.store.readRunInput("r-1")).toEqual({ kind: "saved", value: SECRET });
    const claim = saved(h.store.claimRun({ runId: "r-1", claimToken: "claim-2", leaseMs: LEASE_MS }));
    const fence = { runId: "r-1", generation: claim.command.generation, claimToken: "claim-2" };
    failLaunch(fence, "source_changed");
    expectCleared("r-1");
  });

  it("failed activation after the worker marked it running: the workflow file is gone, no node ran", () => {
    const fence = runningRun(h.store, "r-1", { input: SECRET });
    failLaunch(fence, "workflow_not_found");
    expectCleared("r-1");
  });

  it("a run that ran a node keeps its input when it fails or is cancelled (a restart needs it)", () => {
    const fence = runningRun(h.store, "r-1", { input: SECRET });
    saved(h.store.startNodeVisit(fence, { path: "a", visit: 1, nodeKind: "compute" }));
    saved(
      h.store.finishRun(fence, { outcome: "failed", error: { code: "internal_error", message: "boom" } }),
    );
    expect(h.store.readRunInput("r-1")).toEqual({ kind: "saved", value: SECRET });
    const other = runningRun(h.store, "r-2", { input: { task: "other" }, origin: { kind: "cli" } });
    saved(h.store.startNodeVisit(other, { path: "a", visit: 1, nodeKind: "compute" }));
    saved(h.store.cancelRun({ runId: "r-2" }));
    expect(h.store.readRunInput("r-2")).toEqual({ kind: "saved", value: { task: "other" } });
  });

  it("a blob another row still references stays: only the run's reference goes", () => {
    const fence = runningRun(h.store, "ran", { input: SECRET, origin: { kind: "cli" } });
    saved(h.store.startNodeVisit(fence, { path: "a", visit: 1, nodeKind: "compute" }));
    saved(h.store.finishRun(fence, { outcome: "completed", output: null }));
    saved(h.store.reservePreparedRun(preparedRun("r-1", { input: SECRET })));
    saved(h.store.cancelRun({ runId: "r-1" }));
    expect(h.store.readRunInput("r-1")).toEqual({ kind: "cleared" });
    expect(h.store.readRunInput("ran")).toEqual({ kind: "saved", value: SECRET });
  });

  it("a restart's failed launch keeps the input its parent holds, so it can be restarted again", () => {
    const fence = runningRun(h.store, "root", { input: SECRET, origin: { kind: "cli" } });
    saved(h.store.startNodeVisit(fence, { path: "a", visit: 1, nodeKind: "compute" }));
    saved(h.store.finishRun(fence, { outcome: "failed", error: { code: "internal_error", message: "x" } }));
    saved(h.store.prepareRestart({ parentRunId: "root", runId: "r-1" }));
    saved(h.store.cancelRun({ runId: "r-1" }));
    expect(h.store.readRunInput("r-1")).toEqual({ kind: "saved", value: SECRET });
    expect(h.store.prepareRestart({ parentRunId: "r-1", runId: "r-2" }).kind).toBe("applied");
  });

  it("a cleared launch cannot be restarted, and says why", () => {
    saved(h.store.reservePreparedRun(preparedRun("r-1", { input: SECRET })));
    saved(h.store.cancelRun({ runId: "r-1" }));
    const result = h.store.prepareRestart({ parentRunId: "r-1", runId: "r-2" });
    expect(refused(result)).toEqual({ kind: "input_cleared", runId: "r-1" });
    expect(h.store.getRun("r-2")).toBeNull();
  });

  it("the same start sent again after its launch was cleared adopts the saved run", () => {
    const request = preparedRun("r-1", { input: SECRET, requestKey: "key-1" });
    saved(h.store.reservePreparedRun(request));
    saved(h.store.cancelRun({ runId: "r-1" }));
    const again = h.store.reservePreparedRun(request);
    expect(again.kind).toBe("adopted");
    expectCleared("r-1");
  });
});

describe("the starting client's environment is private launch state too", () => {
  const ENV = { PATH: "/opt/project/bin:/usr/bin", PIW_TEST_TOKEN: "env-SECRET-77aa" };

  it("is saved with the run and read only by its own reader, never in the run record", () => {
    saved(h.store.reservePreparedRun(preparedRun("r-1", { env: ENV })));
    expect(h.store.readRunEnv("r-1")).toEqual(ENV);
    expect(JSON.stringify(h.store.getRun("r-1"))).not.toContain("env-SECRET");
    saved(h.store.reservePreparedRun(preparedRun("r-2", { origin: { kind: "cli" } })));
    expect(h.store.readRunEnv("r-2")).toBeNull();
  });

  it("is cleared with the input when the launch ends before it ran, and its blob is gone", () => {
    startingRun(h.store, "r-1", { env: ENV });
    saved(h.store.cancelRun({ runId: "r-1" }));
    expect(h.store.readRunEnv("r-1")).toBeNull();
    expect(blobsHolding("env-SECRET-77aa")).toBe(0);
  });

  it("is kept by a run that ran, and its continuations and restarts run in it", () => {
    const fence = runningRun(h.store, "r-1", { env: ENV, origin: { kind: "cli" } });
    saved(h.store.startNodeVisit(fence, { path: "a", visit: 1, nodeKind: "compute" }));
    saved(h.store.finishRun(fence, { outcome: "failed", error: { code: "node_failed", message: "x" } }));
    expect(h.store.readRunEnv("r-1")).toEqual(ENV);
    saved(h.store.prepareRestart({ parentRunId: "r-1", runId: "r-2" }));
    expect(h.store.readRunEnv("r-2")).toEqual(ENV);
  });

  it("is not part of the request's identity: a resent start adopts its run and keeps the first environment", () => {
    const request = preparedRun("r-1", { env: ENV, requestKey: "0123456789abcdef0123456789abcdef" });
    saved(h.store.reservePreparedRun(request));
    const again = h.store.reservePreparedRun({ ...request, env: { PATH: "/usr/bin" } });
    expect(again.kind).toBe("adopted");
    expect(h.store.readRunEnv("r-1")).toEqual(ENV);
  });
});
