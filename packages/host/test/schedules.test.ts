import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { AddSchedule, RunSummary } from "@piw/protocol";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { RunningHost } from "../src/index.js";
import {
  exited,
  FLOWS,
  type Sandbox,
  sandbox,
  spawnHostBinary,
  start,
  TestClient,
  writeWorkflow,
} from "./host-fixture.js";

// Schedules fired by the real host on its one clock: each firing's workflow is prepared in the real
// preflight child and run by a real worker; a host binary is killed with SIGKILL around firings.

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

function every2s(file: string, extra: Partial<AddSchedule> = {}): AddSchedule {
  return {
    scheduleId: "tick",
    workflowRef: file,
    workingDir: box.dir,
    input: { n: 1 },
    timing: { kind: "every", everyMs: 2_000 },
    overlap: "skip",
    catchUp: "latest",
    catchUpWindowMs: 3_600_000,
    jitterMs: 0,
    ...extra,
  };
}

/** Poll an async probe until it gives a value (the fixture's `until` takes a synchronous one). */
async function eventually<T>(
  what: string,
  probe: () => Promise<T | undefined | false>,
  timeoutMs = 30_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function scheduleRuns(c: TestClient): Promise<RunSummary[]> {
  return c.call("runs.list", { scheduleId: "tick", limit: 1000 });
}

function firedFor(runs: readonly RunSummary[]): number[] {
  return runs
    .map((run) => (run.origin.kind === "schedule" ? run.origin.scheduledFor : -1))
    .sort((a, b) => a - b);
}

describe("schedules on the host's clock", () => {
  it("fires a schedule every 2 s into runs that complete; pause stops it, resume goes on", async () => {
    const flow = await writeWorkflow(box, "count", FLOWS.count);
    host = await start(box);
    client = await TestClient.connect(host.socketPath);
    const added = await client.call("schedules.add", every2s(flow.file));
    expect(added.kind).toBe("applied");
    const c = client;
    const done = await eventually("two scheduled runs to complete", async () => {
      const runs = await scheduleRuns(c);
      return runs.filter((r) => r.status === "done").length >= 2 ? runs : undefined;
    });
    const finished = done.find((r) => r.status === "done");
    expect(finished?.outcome).toBe("completed");
    expect(finished && host.reader.readRunFinalOutput(finished.runId)).toBe(4);
    // The run names its schedule and the time it fired for.
    const view = await client.call("runs.get", { runId: finished?.runId ?? "" });
    expect(view?.origin).toMatchObject({ kind: "schedule", scheduleId: "tick" });

    const paused = await client.call("schedules.pause", { scheduleId: "tick", note: "quiet please" });
    expect(paused).toMatchObject({ kind: "applied", value: { paused: true, pauseNote: "quiet please" } });
    // A firing already being prepared when the pause came is refused by the store.
    await new Promise((r) => setTimeout(r, 500));
    const atPause = (await scheduleRuns(client)).length;
    await new Promise((r) => setTimeout(r, 4_500));
    expect((await scheduleRuns(client)).length).toBe(atPause);
    const [listed] = await client.call("schedules.list", {});
    expect(listed).toMatchObject({ paused: true, pauseReason: "user" });
    // A firing while a run was still active is skipped (overlap skip) on a slow machine.
    expect(["started", "skipped"]).toContain(listed?.lastFiring?.outcome);

    await client.call("schedules.resume", { scheduleId: "tick" });
    await eventually("a run after the resume", async () => (await scheduleRuns(c)).length > atPause, 30_000);
    const fired = firedFor(await scheduleRuns(client));
    expect(new Set(fired).size).toBe(fired.length);
  }, 180_000);

  it("records a firing whose workflow file is gone, goes on, and pauses after five failures in a row", async () => {
    const flow = await writeWorkflow(box, "count", FLOWS.count);
    host = await start(box);
    client = await TestClient.connect(host.socketPath);
    await client.call("schedules.add", every2s(flow.file, { timing: { kind: "every", everyMs: 1_000 } }));
    rmSync(flow.file);
    const c = client;
    const [failedOnce] = await eventually("a failed firing", async () => {
      const list = await c.call("schedules.list", {});
      return list[0]?.lastFiring?.outcome === "failed" ? list : undefined;
    });
    expect(failedOnce?.lastFiring?.error?.code).toBe("workflow_not_found");
    expect(failedOnce?.paused).toBe(false);
    const [stopped] = await eventually(
      "the schedule to pause itself",
      async () => {
        const list = await c.call("schedules.list", {});
        return list[0]?.paused ? list : undefined;
      },
      40_000,
    );
    expect(stopped).toMatchObject({ pauseReason: "failures", failures: 5 });
    expect(stopped?.pauseNote).toContain("5 firings in a row failed");
    expect(await scheduleRuns(client)).toEqual([]);
  }, 120_000);

  it("prepares a firing of an unchanged file from the launch cache, and evaluates an edited import afresh", async () => {
    mkdirSync(box.workflows, { recursive: true });
    const evaluations = join(box.dir, "evaluations");
    const writeTitle = (title: string) =>
      writeFileSync(
        join(box.workflows, "title.ts"),
        `import { appendFileSync } from "node:fs";\nappendFileSync(${JSON.stringify(evaluations)}, "x");\nexport const title = ${JSON.stringify(title)};\n`,
      );
    writeTitle("first");
    const file = join(box.workflows, "titled.workflow.ts");
    writeFileSync(
      file,
      `import { compute, defineWorkflow } from "piw";
import { title } from "./title.ts";
export default defineWorkflow({ name: "titled", title, startAt: "a", nodes: { a: compute({ run: () => 1 }) }, edges: { a: { to: "done" } } });
`,
    );
    host = await start(box);
    client = await TestClient.connect(host.socketPath);
    const c = client;
    await c.call(
      "schedules.add",
      every2s(file, { input: null, timing: { kind: "every", everyMs: 3_600_000 } }),
    );
    const fire = async () => {
      const fired = await c.call("schedules.trigger", { scheduleId: "tick" });
      const runId = fired.kind === "applied" ? fired.value.run?.runId : undefined;
      if (runId === undefined) throw new Error("the trigger started no run");
      await c.call("runs.subscribe", { runId });
      return c.view(runId, (v) => v.status === "done");
    };
    const count = () => readFileSync(evaluations, "utf8").length;
    // Each firing's run has its worker evaluate the file once; a preflight child adds one more.
    expect((await fire()).outcome).toBe("completed");
    expect(count()).toBe(2);
    expect((await fire()).outcome).toBe("completed");
    expect(count()).toBe(3);
    writeTitle("second");
    expect((await fire()).outcome).toBe("completed");
    expect(count()).toBe(5);
  }, 120_000);

  it("triggers a firing now, and a trigger of an unknown schedule is a typed conflict", async () => {
    const flow = await writeWorkflow(box, "count", FLOWS.count);
    host = await start(box);
    client = await TestClient.connect(host.socketPath);
    await client.call("schedules.add", every2s(flow.file, { timing: { kind: "every", everyMs: 3_600_000 } }));
    const fired = await client.call("schedules.trigger", { scheduleId: "tick" });
    expect(fired.kind).toBe("applied");
    const runId = fired.kind === "applied" ? fired.value.run?.runId : undefined;
    expect(runId).toBeDefined();
    await client.call("runs.subscribe", { runId: runId ?? "" });
    expect((await client.view(runId ?? "", (v) => v.status === "done")).outcome).toBe("completed");
    expect(await client.call("schedules.trigger", { scheduleId: "nope" })).toEqual({
      kind: "conflict",
      evidence: { kind: "not_found", resource: "schedule", id: "nope" },
    });
    const bad = client.call("schedules.add", {
      ...every2s(flow.file),
      scheduleId: "bad",
      timing: { kind: "cron", expression: "61 * * * *" },
    });
    await expect(bad).rejects.toMatchObject({ code: "invalid_params" });
  }, 120_000);

  it("buffers one firing while a run is active and fires it when the run ends; cancel-previous cancels", async () => {
    const flow = await writeWorkflow(box, "hang", FLOWS.hang);
    const release = join(box.dir, "release");
    host = await start(box);
    client = await TestClient.connect(host.socketPath);
    const c = client;
    await c.call(
      "schedules.add",
      every2s(flow.file, {
        input: { release },
        overlap: "buffer-one",
        timing: { kind: "every", everyMs: 1_000 },
      }),
    );
    const buffered = await eventually("a buffered firing, then a skipped one", async () => {
      const [schedule] = await c.call("schedules.list", {});
      return schedule?.bufferedFor !== null && schedule?.lastFiring?.outcome === "skipped"
        ? schedule
        : undefined;
    });
    expect(await scheduleRuns(c)).toHaveLength(1);
    await c.call("schedules.pause", { scheduleId: "tick" });
    writeFileSync(release, "go");
    const runs = await eventually("the buffered firing's run to finish", async () => {
      const all = await scheduleRuns(c);
      return all.length === 2 && all.every((r) => r.status === "done") ? all : undefined;
    });
    expect(firedFor(runs)[1]).toBe(buffered?.bufferedFor);
    expect((await c.call("schedules.list", {}))[0]?.bufferedFor).toBeNull();

    rmSync(release);
    await c.call("schedules.add", {
      ...every2s(flow.file, { input: { release }, overlap: "cancel-previous" }),
      scheduleId: "cancels",
    });
    const cancelled = await eventually("a run cancelled by the next firing", async () => {
      const all = await c.call("runs.list", { scheduleId: "cancels", limit: 100 });
      return all.length >= 2 && all.some((r) => r.status === "cancelled") ? all : undefined;
    });
    await c.call("schedules.pause", { scheduleId: "cancels" });
    const oldest = [...cancelled].sort((a, b) => a.createdAt - b.createdAt)[0];
    expect(oldest?.status).toBe("cancelled");
    writeFileSync(release, "go");
  }, 180_000);

  for (const catchUp of ["all", "latest"] as const) {
    it(`after a kill -9 of the host, makes up missed firings as catch-up ${catchUp} says, none twice`, async () => {
      const flow = await writeWorkflow(box, "count", FLOWS.count);
      const binary = await spawnHostBinary(box);
      const first = await TestClient.connect(join(box.stateDir, "host.sock"));
      await first.call("schedules.add", every2s(flow.file, { overlap: "allow", catchUp }));
      await eventually("a first firing", async () => (await scheduleRuns(first)).length >= 1, 30_000);
      first.close();
      binary.child.kill("SIGKILL");
      await exited(binary.child);
      const killedAt = Date.now();
      // Three or more times fall due while no host runs.
      await new Promise((r) => setTimeout(r, 6_500));
      host = await start(box);
      client = await TestClient.connect(host.socketPath);
      const c = client;
      await eventually(
        "firings after the restart",
        async () => firedFor(await scheduleRuns(c)).some((t) => t > killedAt + 6_500),
        30_000,
      );
      await c.call("schedules.pause", { scheduleId: "tick" });
      const fired = firedFor(await scheduleRuns(c));
      expect(new Set(fired).size).toBe(fired.length);
      const gaps = fired.slice(1).map((t, i) => t - (fired[i] ?? 0));
      expect(gaps.every((gap) => gap % 2_000 === 0)).toBe(true);
      const downTimes = fired.filter((t) => t > killedAt && t < killedAt + 6_000);
      if (catchUp === "all") {
        // Every time, in turn: no gaps at all.
        expect(gaps.every((gap) => gap === 2_000)).toBe(true);
        expect(downTimes.length).toBeGreaterThanOrEqual(2);
      } else {
        // Only the newest missed time was made up.
        expect(downTimes.length).toBeLessThanOrEqual(1);
        expect(gaps.some((gap) => gap >= 4_000)).toBe(true);
      }
    }, 180_000);
  }
});
