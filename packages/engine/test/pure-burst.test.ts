import type { AdvanceNodeVisit, NodeVisitAdvance, Transition } from "@piw/protocol";
import { describe, expect, it } from "vitest";
import {
  BURST_OUTPUT_BUDGET,
  BURST_WINDOW,
  BurstStopped,
  outputWeight,
  PureBurst,
  predictedStart,
} from "../src/executor/pure-burst.js";
import { forwardingPort, MemoryRunPort } from "../src/index.js";

/** The advance from `from` (visit 1, succeeded) into `to`'s first visit. */
function advance(from: string, to: string, output: unknown = from): AdvanceNodeVisit {
  return {
    finish: { path: from, visit: 1, result: { status: "succeeded", output: output as never, next: to } },
    start: { path: to, visit: 1, nodeKind: "compute" },
  };
}

function predicted(request: AdvanceNodeVisit): Transition<NodeVisitAdvance> {
  const { finish } = request;
  return {
    kind: "applied",
    value: {
      finished: {
        status: "finished",
        path: finish.path,
        visit: finish.visit,
        attempt: 1,
        result: finish.result,
      },
      started: predictedStart(request.start.path, request.start.visit),
    },
  };
}

/** A burst over a port whose advances wait until the test answers them, in the order they were sent. */
function heldBurst() {
  const replies: Array<(reply: Transition<NodeVisitAdvance>) => void> = [];
  const port = forwardingPort(new MemoryRunPort(), {
    advanceNodeVisit: () => new Promise((resolve) => replies.push(resolve)),
  });
  return { burst: new PureBurst(port), replies };
}

const lost: Transition<NodeVisitAdvance> = {
  kind: "conflict",
  evidence: { kind: "visit_not_open", runId: "memory-run", path: "b", visit: 1 },
};

describe("a burst of pipelined pure steps", () => {
  it("undoes what changed after the first unpredicted write left, and keeps what changed before", async () => {
    const { burst, replies } = heldBurst();
    const outputs = new Map<string, unknown>([["x", "saved"]]);
    burst.set(outputs, "a", "a"); // nothing in flight: not journaled, never undone
    const first = advance("a", "b");
    await burst.send(first);
    burst.set(outputs, "b", "b");
    const second = advance("b", "c");
    await burst.send(second);
    burst.set(outputs, "c", "c");
    burst.delete(outputs, "x");
    replies[0]?.(predicted(first));
    replies[1]?.(lost);
    const stopped = await burst.settle().catch((error: unknown) => error);
    expect(stopped).toBeInstanceOf(BurstStopped);
    expect((stopped as BurstStopped).broke).toEqual({
      request: second,
      outcome: { kind: "reply", reply: lost },
    });
    expect(Object.fromEntries(outputs)).toEqual({ x: "saved", a: "a", b: "b" });
    // The burst is over: nothing is in flight, and a change now is the saved state's.
    expect(burst.running).toBe(false);
    await burst.settle();
  });

  it("holds every other port call until the writes in flight are acknowledged", async () => {
    const { burst, replies } = heldBurst();
    const order: string[] = [];
    const first = advance("a", "b");
    await burst.send(first);
    const finished = burst.port
      .finishNodeVisit({ path: "b", visit: 1, result: { status: "succeeded", output: 1, next: null } })
      .then(() => order.push("finish"));
    await new Promise((resolve) => setImmediate(resolve));
    order.push("reply");
    replies[0]?.(predicted(first));
    await finished;
    expect(order).toEqual(["reply", "finish"]);
  });

  it("sends a visit's progress only once its start is saved, and none from a burst that broke", async () => {
    const inner = new MemoryRunPort();
    const replies: Array<(reply: Transition<NodeVisitAdvance>) => void> = [];
    const burst = new PureBurst(
      forwardingPort(inner, { advanceNodeVisit: () => new Promise((resolve) => replies.push(resolve)) }),
    );
    const report = (path: string, done: number) => ({
      path,
      visit: 1,
      attempt: 1,
      state: { done, total: null, message: null },
    });
    const first = advance("a", "b");
    await burst.send(first);
    burst.port.reportProgress(report("b", 1));
    burst.port.reportProgress(report("b", 2));
    expect(inner.progressReports).toEqual([]);
    replies[0]?.(predicted(first));
    await new Promise((resolve) => setImmediate(resolve));
    expect(inner.progressReports).toEqual([report("b", 2)]);
    const second = advance("b", "c");
    await burst.send(second);
    burst.port.reportProgress(report("c", 1));
    replies[1]?.(lost);
    await burst.settle().catch(() => undefined);
    expect(inner.progressReports).toEqual([report("b", 2)]);
  });

  it("keeps at most a window of advances in flight, and sends the next once the oldest is saved", async () => {
    const { burst, replies } = heldBurst();
    const sent = Array.from({ length: BURST_WINDOW + 1 }, (_, i) => advance(`n${i}`, `n${i + 1}`, i));
    for (const request of sent.slice(0, BURST_WINDOW)) await burst.send(request);
    let last = false;
    const next = burst.send(sent[BURST_WINDOW] as AdvanceNodeVisit).then(() => {
      last = true;
    });
    await new Promise((resolve) => setImmediate(resolve));
    expect(replies).toHaveLength(BURST_WINDOW);
    expect(last).toBe(false);
    replies[0]?.(predicted(sent[0] as AdvanceNodeVisit));
    await next;
    expect(replies).toHaveLength(BURST_WINDOW + 1);
  });

  it("holds large outputs to the output budget, and still sends one larger than the budget alone", async () => {
    const { burst, replies } = heldBurst();
    const third = "x".repeat(Math.ceil(BURST_OUTPUT_BUDGET / 3));
    const big = [advance("a", "b", third), advance("b", "c", third), advance("c", "d", { text: third })];
    await burst.send(big[0] as AdvanceNodeVisit);
    await burst.send(big[1] as AdvanceNodeVisit);
    let third2 = false;
    const pending = burst.send(big[2] as AdvanceNodeVisit).then(() => {
      third2 = true;
    });
    await new Promise((resolve) => setImmediate(resolve));
    expect(replies).toHaveLength(2);
    expect(third2).toBe(false);
    replies[0]?.(predicted(big[0] as AdvanceNodeVisit));
    await pending;
    expect(replies).toHaveLength(3);
    replies[1]?.(predicted(big[1] as AdvanceNodeVisit));
    replies[2]?.(predicted(big[2] as AdvanceNodeVisit));
    await burst.settle();
    // Nothing in flight: an output over the whole budget goes at once (the channel judges its size).
    await burst.send(advance("d", "e", "y".repeat(BURST_OUTPUT_BUDGET * 2)));
    expect(replies).toHaveLength(4);
  });

  it("weighs an output about as its JSON text, and stops counting at the limit", () => {
    expect(outputWeight(1, 100)).toBe(8);
    expect(outputWeight("abcd", 100)).toBe(6);
    // keys "ab" (2 + 4) and "list" (4 + 4), "cd" (2 + 2), the array (2 + 2 members), 1 and null (8 each)
    expect(outputWeight({ ab: "cd", list: [1, null] }, 1000)).toBe(6 + 8 + 4 + 4 + 8 + 8);
    expect(outputWeight(["x".repeat(50), "y".repeat(50)], 60)).toBe(60);
    const deep: unknown[] = [];
    let cursor = deep;
    for (let i = 0; i < 10_000; i++) {
      const inner: unknown[] = [];
      cursor.push(inner);
      cursor = inner;
    }
    expect(outputWeight(deep, 1_000_000)).toBe(10_000 * 3 + 2);
  });
});
