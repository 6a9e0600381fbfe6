import { type Fence, PASSED_VISITS_MAX, type RunOrigin, type RunView, runViewSchema } from "@piw/protocol";
import type { RunStore } from "@piw/store";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ViewPublisher } from "../src/view-publisher.js";
import { runningRun, type StoreFile, storeFile } from "./store-file.js";

const RUN = "views-1";

let file: StoreFile;
let store: RunStore;
let publisher: ViewPublisher | undefined;
beforeEach(() => {
  file = storeFile("piw-views-");
  store = file.store;
});
afterEach(() => {
  publisher?.close();
  file.cleanup();
});

/** A run that is running, so that each opened visit moves its revision (a new view). */
function running(runId = RUN, origin: RunOrigin = { kind: "cli" }): Fence {
  return runningRun(store, runId, { workflowName: "views", origin });
}

function openVisit(fence: Fence, path: string): void {
  const opened = store.startNodeVisit(fence, { path, visit: 1, nodeKind: "compute" });
  if (opened.kind !== "applied") throw new Error(JSON.stringify(opened));
}

/**
 * A publisher on the real store whose clock the test sets. `perRead` is added on every read of the
 * clock: the publisher reads it before and after building a view, so that is what a view "costs".
 */
async function publisherWithClock(perRead: number) {
  const clock = { at: 1_000, perRead };
  const views: RunView[] = [];
  publisher = new ViewPublisher(
    store,
    { acceptedWorker: () => undefined },
    (error) => {
      throw error;
    },
    () => {
      clock.at += clock.perRead;
      return clock.at;
    },
  );
  publisher.subscribe(
    { push: (_push, data) => views.push((data as { view: RunView }).view) },
    { kind: "run", runId: RUN },
  );
  // A new subscription gets the current view on the next turn; the tests count what follows it.
  await new Promise((resolve) => setImmediate(resolve));
  expect(views).toHaveLength(1);
  views.length = 0;
  return { clock, views, publisher };
}

describe("ViewPublisher", () => {
  it("pushes every change of a run whose view costs nothing", async () => {
    const fence = running();
    const { views, publisher } = await publisherWithClock(0);
    for (const path of ["a", "b", "c"]) {
      openVisit(fence, path);
      publisher.changed(RUN);
      publisher.flush();
    }
    expect(views.map((v) => v.revision)).toEqual([...new Set(views.map((v) => v.revision))]);
    expect(views).toHaveLength(3);
  });

  it("holds an expensive run's views back for thirty times their cost, then sends the latest state", async () => {
    const fence = running();
    const { clock, views, publisher } = await publisherWithClock(5);
    openVisit(fence, "a");
    publisher.changed(RUN);
    publisher.flush();
    expect(views).toHaveLength(1);

    // The view took 5 "ms" to build and send: nothing more goes out for the next 145.
    clock.perRead = 0;
    for (const path of ["b", "c", "d"]) {
      openVisit(fence, path);
      publisher.changed(RUN);
      publisher.flush();
    }
    expect(views).toHaveLength(1);

    clock.at += 144;
    publisher.flush();
    expect(views).toHaveLength(1);

    clock.at += 1;
    publisher.flush();
    expect(views).toHaveLength(2);
    expect(views[1]?.revision).toBe(store.getRun(RUN)?.revision);
    expect(views[1]?.revision).toBeGreaterThan(views[0]?.revision ?? Number.POSITIVE_INFINITY);
  });

  it("sends a run's final view at once, even while its views are held back", async () => {
    const fence = running();
    const { clock, views, publisher } = await publisherWithClock(5);
    openVisit(fence, "a");
    publisher.changed(RUN);
    publisher.flush();
    clock.perRead = 0;
    openVisit(fence, "b");
    publisher.changed(RUN);
    publisher.flush();
    expect(views).toHaveLength(1);

    const finished = store.finishRun(fence, { outcome: "completed", output: 2 });
    expect(finished.kind).toBe("applied");
    publisher.changed(RUN);
    publisher.flush();
    expect(views.map((v) => v.status)).toEqual(["running", "done"]);
    expect(views[1]?.revision).toBe(store.getRun(RUN)?.revision);
  });

  it("names the visits a held-back view no longer shows, once, oldest first (the passed-visits rule)", async () => {
    const fence = running();
    const { clock, views, publisher } = await publisherWithClock(5);
    const visit = (path: string, n: number, failed: boolean) => {
      expect(store.startNodeVisit(fence, { path, visit: n, nodeKind: "shell" }).kind).toBe("applied");
      const error = { code: "node_failed" as const, message: "exit 1" };
      const result = failed
        ? { status: "failed" as const, error, next: "fix" }
        : { status: "succeeded" as const, output: n, next: "test" };
      expect(store.finishNodeVisit(fence, { path, visit: n, result }).kind).toBe("applied");
    };
    openVisit(fence, "setup");
    publisher.changed(RUN);
    publisher.flush();
    expect(views).toHaveLength(1);
    expect(views[0]?.passed).toBeUndefined();

    // While the views are held back, `test` fails twice and `fix` runs twice: one view shows the last of each.
    clock.perRead = 0;
    visit("test", 1, true);
    visit("fix", 1, false);
    visit("test", 2, true);
    visit("fix", 2, false);
    expect(store.startNodeVisit(fence, { path: "test", visit: 3, nodeKind: "shell" }).kind).toBe("applied");
    publisher.changed(RUN);
    publisher.flush();
    expect(views).toHaveLength(1);
    clock.at += 1_000;
    publisher.flush();
    expect(views).toHaveLength(2);
    const held = views[1];
    // Its third visit is open (shown pending here: no worker is accepted in this test).
    expect(held?.nodes.find((n) => n.path === "test")).toMatchObject({ visits: 3, finishedAt: null });
    expect(held?.passed?.map((v) => `${v.path}#${v.visit}:${v.state}`)).toEqual([
      "test#1:failed",
      "fix#1:succeeded",
      "test#2:failed",
    ]);
    expect(held?.passed?.[0]).toMatchObject({ attempt: 1, errorCode: "node_failed" });
    expect(held?.passedOmitted).toBeUndefined();

    // The next view passes on only what ended since: the third test visit, replaced by a fourth.
    clock.at += 1_000;
    expect(
      store.finishNodeVisit(fence, {
        path: "test",
        visit: 3,
        result: { status: "succeeded", output: 3, next: "test" },
      }).kind,
    ).toBe("applied");
    expect(store.startNodeVisit(fence, { path: "test", visit: 4, nodeKind: "shell" }).kind).toBe("applied");
    publisher.changed(RUN);
    publisher.flush();
    expect(views[2]?.passed?.map((v) => `${v.path}#${v.visit}:${v.state}`)).toEqual(["test#3:succeeded"]);
  });

  it("keeps the newest passed visits when more ended between two views than one view carries", async () => {
    const fence = running();
    const { clock, views, publisher } = await publisherWithClock(5);
    openVisit(fence, "setup");
    publisher.changed(RUN);
    publisher.flush();
    clock.perRead = 0;
    const loops = PASSED_VISITS_MAX + 7;
    for (let n = 1; n <= loops + 1; n++) {
      expect(store.startNodeVisit(fence, { path: "loop", visit: n, nodeKind: "compute" }).kind).toBe(
        "applied",
      );
      if (n > loops) break;
      const result = { status: "succeeded" as const, output: n, next: "loop" };
      expect(store.finishNodeVisit(fence, { path: "loop", visit: n, result }).kind).toBe("applied");
    }
    clock.at += 1_000;
    publisher.changed(RUN);
    publisher.flush();
    const view = views.at(-1);
    expect(view?.passed).toHaveLength(PASSED_VISITS_MAX);
    expect(view?.passedOmitted).toBe(7);
    expect(view?.passed?.[0]?.visit).toBe(8);
    expect(view?.passed?.at(-1)?.visit).toBe(loops);
    expect(() => runViewSchema.parse(view)).not.toThrow();
  });

  it("publishes a held-back change on its own once the wait is over", async () => {
    const fence = running();
    const { clock, views, publisher } = await publisherWithClock(1);
    openVisit(fence, "a");
    publisher.changed(RUN);
    publisher.flush();
    clock.perRead = 0;
    openVisit(fence, "b");
    publisher.changed(RUN);
    publisher.flush();
    expect(views).toHaveLength(1);

    // The flush that changed() queued runs too, and still holds the view back.
    await new Promise((resolve) => setImmediate(resolve));
    expect(views).toHaveLength(1);

    // Nobody calls flush or changed() again: the publisher's own timer sends the latest view.
    clock.at += 100;
    const revision = store.getRun(RUN)?.revision;
    for (let turn = 0; turn < 200 && views.length < 2; turn++) {
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    expect(views).toHaveLength(2);
    expect(views[1]?.revision).toBe(revision);
  });

  it("sends a session's subscriber only that session's runs, and an all-runs subscriber every run", async () => {
    const mine = running("mine-1", { kind: "pi", sessionId: "session-a" });
    const theirs = running("theirs-1", { kind: "pi", sessionId: "session-b" });
    const cli = running("cli-1");
    publisher = new ViewPublisher(store, { acceptedWorker: () => undefined }, (error) => {
      throw error;
    });
    const seen = { session: [] as string[], all: [] as string[] };
    const sink = (into: string[]) => ({
      push: (_push: string, data: unknown) => into.push((data as { view: RunView }).view.runId),
    });
    publisher.subscribe(sink(seen.session), { kind: "session", sessionId: "session-a" });
    publisher.subscribe(sink(seen.all), { kind: "all" });
    await new Promise((resolve) => setImmediate(resolve));
    // The current views: the session's live runs only, and every live run.
    expect(seen.session).toEqual(["mine-1"]);
    expect([...seen.all].sort()).toEqual(["cli-1", "mine-1", "theirs-1"]);

    seen.session.length = 0;
    seen.all.length = 0;
    for (const fence of [mine, theirs, cli]) {
      openVisit(fence, "a");
      publisher.changed(fence.runId);
    }
    publisher.flush();
    expect(seen.session).toEqual(["mine-1"]);
    expect([...seen.all].sort()).toEqual(["cli-1", "mine-1", "theirs-1"]);
  });
});
