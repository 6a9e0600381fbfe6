import { randomBytes } from "node:crypto";
import { join } from "node:path";
import { type JsonValue, type PrepareContinuation, reservePreparedRunSchema } from "@piw/protocol";
import Database from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { RunStore } from "../src/index.js";
import {
  expectRefusedBySchema,
  openHarness,
  preparedRun,
  refusedWithoutChange,
  runningRun,
  type StoreHarness,
  saved,
  unchanged,
} from "./fixtures.js";

// A client sends a run-creating request again when the reply was lost; the host gives every attempt
// a new run ID, so the request key alone must find the run the first attempt made.

const CHECKPOINT = { path: "ask", visit: 1, prompt: "Go on?" };

let h: StoreHarness;
beforeEach(() => {
  h = openHarness();
});
afterEach(() => h.cleanup());

const newKey = () => randomBytes(16).toString("hex");

function waitingParent(store: RunStore, runId: string): void {
  const fence = runningRun(store, runId, { origin: { kind: "cli" } });
  saved(store.startNodeVisit(fence, { path: CHECKPOINT.path, visit: 1, nodeKind: "checkpoint" }));
  saved(
    store.finishRun(fence, {
      outcome: "waiting",
      checkpoint: CHECKPOINT,
      answerCheck: { kind: "worker_only", reason: "not checked in this test" },
    }),
  );
}

function failedParent(store: RunStore, runId: string): void {
  const fence = runningRun(store, runId, { origin: { kind: "cli" } });
  saved(store.startNodeVisit(fence, { path: "a", visit: 1, nodeKind: "compute" }));
  saved(store.finishRun(fence, { outcome: "failed", error: { code: "node_failed", message: "Boom." } }));
}

function continuation(
  runId: string,
  requestKey: string,
  answer: JsonValue = { go: true },
): PrepareContinuation {
  return {
    runId,
    parentRunId: "parent",
    accepted: { path: CHECKPOINT.path, visit: CHECKPOINT.visit, answer },
    answerer: "human" as const,
    requestKey,
  };
}

describe("reservePreparedRun with a request key", () => {
  it("adopts a resend under a new run ID: the first run, holding its session, and no second run", () => {
    const key = newKey();
    const first = saved(h.store.reservePreparedRun(preparedRun("run-1", { requestKey: key })));
    // The Pi session is held by run-1 itself: a resend is not `session_busy`.
    const again = unchanged(h.store, ["run-1", "run-2"], () =>
      h.store.reservePreparedRun(preparedRun("run-2", { requestKey: key })),
    );
    expect(again).toEqual({ kind: "adopted", value: first });
    expect(h.store.listRuns().map((run) => run.runId)).toEqual(["run-1"]);
  });

  it("adopts a resend after the run went on, and after the store was reopened", () => {
    const key = newKey();
    const fence = runningRun(h.store, "run-1", { requestKey: key });
    saved(h.store.finishRun(fence, { outcome: "completed", output: { ok: true } }));
    h.reopen();
    const again = h.store.reservePreparedRun(preparedRun("run-2", { requestKey: key }));
    expect(again.kind).toBe("adopted");
    expect(again.kind === "adopted" && again.value).toMatchObject({ runId: "run-1", status: "done" });
    expect(h.store.getRun("run-2")).toBeNull();
  });

  it("refuses the same key with another request (request_mismatch naming the run) and changes nothing", () => {
    const key = newKey();
    saved(h.store.reservePreparedRun(preparedRun("run-1", { requestKey: key })));
    const others = [
      preparedRun("run-2", { requestKey: key, input: { task: "something else" } }),
      preparedRun("run-2", { requestKey: key, workflowName: "other" }),
      preparedRun("run-2", { requestKey: key, origin: { kind: "pi", sessionId: "session-2" } }),
      preparedRun("run-2", { requestKey: key, workingDir: "/elsewhere" }),
    ];
    for (const other of others) {
      expect(
        refusedWithoutChange(h.store, ["run-1", "run-2"], () => h.store.reservePreparedRun(other)),
      ).toEqual({ kind: "request_mismatch", resource: "run", id: "run-1" });
    }
    expect(h.store.getRun("run-2")).toBeNull();
  });

  it("keeps different keys apart: two equal requests with two keys are two starts", () => {
    saved(
      h.store.reservePreparedRun(preparedRun("run-1", { requestKey: newKey(), origin: { kind: "cli" } })),
    );
    const second = h.store.reservePreparedRun(
      preparedRun("run-2", { requestKey: newKey(), origin: { kind: "cli" } }),
    );
    expect(second.kind).toBe("applied");
    expect(h.store.listRuns()).toHaveLength(2);
  });

  it("refuses a run ID that names a run saved under another key", () => {
    saved(h.store.reservePreparedRun(preparedRun("run-1", { requestKey: newKey() })));
    expect(
      refusedWithoutChange(h.store, ["run-1"], () =>
        h.store.reservePreparedRun(preparedRun("run-1", { requestKey: newKey() })),
      ),
    ).toEqual({ kind: "request_mismatch", resource: "run", id: "run-1" });
  });

  it.each(["", "short", "A".repeat(32), "g".repeat(32), "0".repeat(33)])(
    "leaves a malformed key %j to the protocol schema, which refuses it before the store",
    (requestKey) => {
      expectRefusedBySchema(reservePreparedRunSchema, preparedRun("run-1", { requestKey }));
    },
  );
});

describe("continuations and restarts with a request key", () => {
  it("adopts a resent answer under a new child ID instead of refusing it as child_exists", () => {
    waitingParent(h.store, "parent");
    const key = newKey();
    const first = saved(h.store.prepareContinuation(continuation("child-1", key)));
    const again = unchanged(h.store, ["parent", "child-1", "child-2"], () =>
      h.store.prepareContinuation(continuation("child-2", key)),
    );
    expect(again).toEqual({ kind: "adopted", value: first });
  });

  it("refuses the answer's key with another answer (request_mismatch)", () => {
    waitingParent(h.store, "parent");
    const key = newKey();
    saved(h.store.prepareContinuation(continuation("child-1", key)));
    expect(
      refusedWithoutChange(h.store, ["parent", "child-1", "child-2"], () =>
        h.store.prepareContinuation(continuation("child-2", key, { go: false })),
      ),
    ).toEqual({ kind: "request_mismatch", resource: "run", id: "child-1" });
  });

  it("adopts a resent restart under a new child ID; another parent under the key is refused", () => {
    failedParent(h.store, "parent");
    failedParent(h.store, "other");
    const key = newKey();
    const first = saved(h.store.prepareRestart({ runId: "child-1", parentRunId: "parent", requestKey: key }));
    const again = unchanged(h.store, ["parent", "child-1", "child-2"], () =>
      h.store.prepareRestart({ runId: "child-2", parentRunId: "parent", requestKey: key }),
    );
    expect(again).toEqual({ kind: "adopted", value: first });
    expect(
      refusedWithoutChange(h.store, ["other", "child-1", "child-2"], () =>
        h.store.prepareRestart({ runId: "child-2", parentRunId: "other", requestKey: key }),
      ),
    ).toEqual({ kind: "request_mismatch", resource: "run", id: "child-1" });
  });

  it("keeps a key unique across every kind of run: a start's key cannot create a continuation or a restart", () => {
    waitingParent(h.store, "parent");
    const startKey = newKey();
    saved(h.store.reservePreparedRun(preparedRun("run-1", { requestKey: startKey })));
    expect(
      refusedWithoutChange(h.store, ["parent", "run-1", "child"], () =>
        h.store.prepareContinuation(continuation("child", startKey)),
      ),
    ).toEqual({ kind: "request_mismatch", resource: "run", id: "run-1" });
    expect(
      refusedWithoutChange(h.store, ["parent", "run-1", "child"], () =>
        h.store.prepareRestart({ runId: "child", parentRunId: "parent", requestKey: startKey }),
      ),
    ).toEqual({ kind: "request_mismatch", resource: "run", id: "run-1" });

    const answerKey = newKey();
    saved(h.store.prepareContinuation(continuation("child", answerKey)));
    expect(
      refusedWithoutChange(h.store, ["child", "run-2"], () =>
        h.store.reservePreparedRun(preparedRun("run-2", { requestKey: answerKey })),
      ),
    ).toEqual({ kind: "request_mismatch", resource: "run", id: "child" });
  });

  it("has the unique index under it: no writer can give two runs one key", () => {
    const key = newKey();
    saved(h.store.reservePreparedRun(preparedRun("run-1", { requestKey: key, origin: { kind: "cli" } })));
    saved(
      h.store.reservePreparedRun(preparedRun("run-2", { requestKey: newKey(), origin: { kind: "cli" } })),
    );
    h.store.close();
    const db = new Database(join(h.dir, "state.db"));
    try {
      expect(() => db.prepare("UPDATE runs SET request_key = ? WHERE run_id = 'run-2'").run(key)).toThrow(
        /UNIQUE constraint failed: runs.request_key/,
      );
    } finally {
      db.close();
      h.reopen();
    }
  });
});
