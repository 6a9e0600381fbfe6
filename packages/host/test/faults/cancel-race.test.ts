import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { lines } from "@piw/test-kit";
import type { RunningHost } from "../../src/index.js";
import { type Sandbox, sandbox, start, TestClient, writeWorkflow } from "../host-fixture.js";
import { eventTypes, idle, readState } from "./fault-fixture.js";

let box: Sandbox;
let host: RunningHost | undefined;
let client: TestClient | undefined;
beforeEach(() => {
  box = sandbox();
});
afterEach(async () => {
  client?.close();
  await host?.stop();
  host = undefined;
  box.cleanup();
});

/** Reserve, then cancel at once (0-2 ms later). */
const ITERATIONS = 1000;
/** On top: reserve, then cancel late, around the first node's start. */
const LATE_ITERATIONS = 25;
/** Late iterations wait for their worker to boot: this many run at once. */
const LATE_LANES = 3;
/** Early iterations wait while this many (cancelled, dying) workers are still alive. */
const MAX_EARLY_WORKERS = 2;

/** Its first node appends the run's tag to the log: a line there means node code ran. */
const RACE_FLOW = `import { appendFileSync } from "node:fs";
import { compute, defineWorkflow, type NodeContext } from "piw";
import { z } from "zod";

type Input = { tag: string; log: string };

export default defineWorkflow({
  name: "race",
  input: z.object({ tag: z.string(), log: z.string() }),
  startAt: "mark",
  nodes: {
    mark: compute({
      run: ({ input }: NodeContext<Input>) => {
        appendFileSync(input.log, input.tag + "\\n");
        return input.tag;
      },
    }),
    after: compute({ run: ({ outputs }) => outputs.mark }),
  },
  edges: { mark: { to: "after" }, after: { to: "done" } },
});
`;

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

interface Raced {
  runId: string;
  tag: string;
  late: boolean;
  /** The kind of the cancel's reply. */
  cancel: string;
}

/** Where the cancel landed: the run's event just before `run.cancelled`. */
function landedAfter(types: string[]): string {
  const at = types.indexOf("run.cancelled");
  return at < 0 ? "completed first" : (types[at - 1] ?? "nothing");
}

/** The time from `run.running` to the first `node.started` of a run, in ms. */
function runningToNodeStart(reader: RunningHost["reader"], runId: string): number {
  const events = reader.listRunEvents(runId);
  const running = events.find((e) => e.type === "run.running");
  const started = events.find((e) => e.type === "node.started");
  if (!running || !started) throw new Error(`run ${runId} never started a node`);
  return started.at - running.at;
}

interface Phase {
  host: RunningHost;
  client: TestClient;
  reserve(tag: string): Promise<string>;
}

describe("cancel racing activation", () => {
  it(`no node starts after the cancel was applied (${ITERATIONS} + ${LATE_ITERATIONS} late iterations)`, async () => {
    const log = join(box.dir, "marks.log");
    const flow = await writeWorkflow(box, "race", RACE_FLOW);
    const open = async (cancelGraceMs: number): Promise<Phase> => {
      const h = await start(box, { cancelGraceMs });
      host = h;
      const c = await TestClient.connect(h.socketPath);
      client = c;
      await c.call("runs.subscribe", {});
      const reserve = async (tag: string): Promise<string> => {
        const reserved = await c.call("runs.reserve", flow.reserve({ tag, log }));
        if (reserved.kind !== "applied") throw new Error(JSON.stringify(reserved));
        return reserved.value.runId;
      };
      return { host: h, client: c, reserve };
    };
    const close = async (phase: Phase) => {
      await idle(phase.client, 60_000);
      phase.client.close();
      await phase.host.stop();
      client = undefined;
      host = undefined;
    };
    const raced: Raced[] = [];
    const early = Array.from({ length: ITERATIONS }, (_, i) => i);
    const late = Array.from({ length: LATE_ITERATIONS }, (_, i) => ITERATIONS + i);
    const began = Date.now();

    // Early: reserve (activation claims the run and spawns its worker at once), then cancel after 0-2 ms.
    // The host kills a cancelled run's worker at once (grace 0), so these do not pile up while they boot.
    const first = await open(0);
    for (const i of early) {
      while ((await first.client.call("host.status", {})).workers.length >= MAX_EARLY_WORKERS) await sleep(5);
      const tag = `t${i}`;
      const runId = await first.reserve(tag);
      const delay = Math.floor(Math.random() * 3);
      if (delay > 0) await sleep(delay);
      const cancelled = await first.client.call("runs.cancel", { runId });
      raced.push({ runId, tag, late: false, cancel: cancelled.kind });
    }
    await close(first);
    const earlyTook = Date.now() - began;

    // Late, with the default grace: the worker handles the cancel itself. Each waits until its worker
    // marked the run running, then cancels around the first node's start; the aim follows where the
    // cancels land, so about as many land before the node starts as after.
    const second = await open(3_000);
    let aimMs = 0;
    for (const tag of ["calibrate-1", "calibrate-2"]) {
      const runId = await second.reserve(tag);
      await second.client.view(runId, (v) => v.status === "done", 60_000);
      aimMs = Math.max(aimMs, runningToNodeStart(second.host.reader, runId));
    }
    expect(lines(log).slice(-2)).toEqual(["calibrate-1", "calibrate-2"]);
    const lateLane = async () => {
      for (let i = late.shift(); i !== undefined; i = late.shift()) {
        const tag = `t${i}`;
        const runId = await second.reserve(tag);
        await second.client.view(runId, (v) => v.status !== "queued" && v.status !== "starting", 60_000);
        await sleep(aimMs * (0.5 + Math.random()));
        const cancelled = await second.client.call("runs.cancel", { runId });
        raced.push({ runId, tag, late: true, cancel: cancelled.kind });
        aimMs *= eventTypes(second.host.reader, runId).includes("node.started") ? 0.85 : 1.15;
      }
    };
    await Promise.all(Array.from({ length: LATE_LANES }, lateLane));
    await close(second);
    const took = Date.now() - began;
    expect(raced).toHaveLength(ITERATIONS + LATE_ITERATIONS);

    const marks = lines(log);
    const landed: Record<string, number> = {};
    readState(box, (reader) => {
      for (const run of raced) {
        const record = reader.getRun(run.runId);
        const types = eventTypes(reader, run.runId);
        const ran = marks.filter((m) => m === run.tag).length;
        const about = `${run.tag} (${run.runId}): ${types.join(" ")}`;
        // Never left running, starting, queued or parked.
        expect(record?.status, about).toMatch(/^(cancelled|done)$/);
        if (record?.status === "cancelled") {
          expect(run.cancel, about).toBe("applied");
          // The claim ended with the cancel: no node of the run started after it.
          expect(types.slice(types.indexOf("run.cancelled") + 1), about).not.toContain("node.started");
          // A run whose node never started never ran node code; one that started ran it at most once.
          expect(ran, about).toBeLessThanOrEqual(types.includes("node.started") ? 1 : 0);
        } else {
          // It completed before the cancel arrived: the cancel was refused, not half-applied.
          expect(run.cancel, about).toBe("conflict");
          expect(record, about).toHaveProperty("outcome", "completed");
          expect(ran, about).toBe(1);
        }
        // 0-2 ms after the reserve reply no worker can have reached a node: every early run is cancelled unrun.
        if (!run.late) expect([record?.status, ran], about).toEqual(["cancelled", 0]);
        const where = `${run.late ? "late" : "early"}, after ${landedAfter(types)}`;
        landed[where] = (landed[where] ?? 0) + 1;
      }
    });
    console.info(
      `cancel race: ${ITERATIONS} + ${LATE_ITERATIONS} late iterations in ${took} ms (early ones ${earlyTook} ms); cancels applied right after: ${JSON.stringify(landed)}`,
    );
  }, 300_000);
});
