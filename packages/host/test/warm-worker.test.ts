import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { isAlive, waitFor } from "@piw/test-kit";
import type { RunningHost } from "../src/index.js";
import {
  FLOWS,
  finished,
  type Sandbox,
  sandbox,
  start,
  TestClient,
  WORKER_COMMAND,
  writeWorkflow,
} from "./host-fixture.js";

let box: Sandbox;
let host: RunningHost | undefined;
let client: TestClient | undefined;
let logLines: string[];
beforeEach(() => {
  box = sandbox();
  logLines = [];
});
afterEach(async () => {
  client?.close();
  await host?.stop();
  host = undefined;
  box.cleanup();
});

async function open(
  extra: Parameters<typeof start>[1] = {},
  tuning?: Parameters<typeof start>[2],
): Promise<TestClient> {
  host = await start(box, { log: (line) => logLines.push(line), ...extra }, tuning);
  client = await TestClient.connect(host.socketPath);
  await client.call("runs.subscribe", {});
  return client;
}

function idlePid(c: TestClient, not?: number): Promise<number> {
  return waitFor(`an idle worker other than ${not}`, async () => {
    const pid = (await c.call("host.status", {})).idleWorkerPid;
    return typeof pid === "number" && pid !== not ? pid : undefined;
  });
}

/**
 * A preload for the worker that writes every module it loads, in order, to `<dir>/<pid>.modules`, and
 * a marker line when the process first listens on stdin: from then on it is idle, waiting for the host.
 */
function moduleReport(dir: string): string {
  const file = join(dir, "module-report.mjs");
  writeFileSync(
    file,
    `import { appendFileSync } from "node:fs";
import { registerHooks } from "node:module";
const out = ${JSON.stringify(dir)} + "/" + process.pid + ".modules";
registerHooks({ load(url, context, next) { appendFileSync(out, url + "\\n"); return next(url, context); } });
const stdin = process.stdin;
const on = stdin.on;
let idle = false;
stdin.on = function (event, listener) {
  if (!idle && (event === "readable" || event === "data")) {
    idle = true;
    appendFileSync(out, "${IDLE_MARK}\\n");
  }
  return on.call(this, event, listener);
};
`,
  );
  return file;
}
const IDLE_MARK = "-- listening on stdin";

describe("the warm worker", () => {
  it("serves an activation with the process started before it, and starts the next one", async () => {
    const c = await open();
    const flow = await writeWorkflow(box, "hang", FLOWS.hang);
    const before = await idlePid(c);
    expect(isAlive(before)).toBe(true);
    // The idle worker is no run's worker.
    expect((await c.call("host.status", {})).workers).toEqual([]);

    const release = join(box.dir, "release");
    const reserved = await c.call("runs.reserve", flow.reserve({ release }));
    if (reserved.kind !== "applied") throw new Error(JSON.stringify(reserved));
    const { runId } = reserved.value;
    await c.view(runId, (v) => v.nodes.some((n) => n.path === "hang" && n.state === "running"));

    const status = await c.call("host.status", {});
    expect(status.workers).toHaveLength(1);
    expect(status.workers[0]).toMatchObject({ runId, pid: before });
    // A new idle worker took its place, and it is not listed as the run's.
    const next = await idlePid(c, before);
    expect(isAlive(next)).toBe(true);
    expect((await c.call("host.status", {})).workers.map((w) => w.pid)).toEqual([before]);

    writeFileSync(release, "");
    const done = await c.view(runId, (v) => v.status === "done");
    expect(done.outcome).toBe("completed");
    // The worker said hello with the launch the host assigned it, not some other ID.
    expect(logLines.filter((line) => line.includes("said hello as"))).toEqual([]);
    expect(
      logLines.some((line) => line.includes(`launched worker`) && line.includes(`(pid ${before})`)),
    ).toBe(true);
  });

  it("replaces an idle worker that dies, and runs the next activation on the replacement", async () => {
    const c = await open();
    const first = await idlePid(c);
    process.kill(-first, "SIGKILL");
    const second = await idlePid(c, first);
    expect(isAlive(first)).toBe(false);
    expect((await c.call("host.status", {})).workers).toEqual([]);

    const flow = await writeWorkflow(box, "count", FLOWS.count);
    const reserved = await c.call("runs.reserve", flow.reserve({ n: 1 }));
    if (reserved.kind !== "applied") throw new Error(JSON.stringify(reserved));
    const done = await c.view(reserved.value.runId, (v) => v.status === "done");
    expect(done.outcome).toBe("completed");
    expect(
      logLines.some((line) => line.includes(`(pid ${second})`) && line.includes("launched worker")),
    ).toBe(true);
  });

  it("backs off when idle workers keep dying, and starts none once the host stops", async () => {
    // A "worker" that exits at once: every idle one dies.
    await open({ workerCommand: [process.execPath, "-e", ""] });
    const waits = () =>
      logLines.flatMap((line) => {
        const found = /idle worker pid \d+ gone .*; next in (\d+) ms/.exec(line);
        return found ? [Number(found[1])] : [];
      });
    await waitFor("three idle deaths", () => waits().length >= 3);
    expect(waits().slice(0, 3)).toEqual([250, 500, 1000]);
    const started = () => logLines.filter((line) => line.includes("idle worker started")).length;
    await host?.stop();
    const afterStop = started();
    await new Promise((r) => setTimeout(r, 1_200));
    expect(started()).toBe(afterStop);
  });

  it("holds none of the run's modules while idle, and loads them when the host hands it a run", async () => {
    const [node, ...args] = WORKER_COMMAND;
    if (node === undefined) throw new Error("no worker command");
    const c = await open({ workerCommand: [node, "--import", moduleReport(box.dir), ...args] });
    const flow = await writeWorkflow(box, "count", FLOWS.count);
    const pid = await idlePid(c);
    const report = join(box.dir, `${pid}.modules`);
    // The worker may not have loaded anything yet.
    const loaded = () => (existsSync(report) ? readFileSync(report, "utf8").split("\n") : []);
    const idle = await waitFor("the idle worker to listen on stdin", () => {
      const lines = loaded();
      const at = lines.indexOf(IDLE_MARK);
      return at >= 0 ? lines.slice(0, at) : undefined;
    });
    // zod, the protocol, the engine and the built-ins are most of a loaded worker's memory.
    const heavy = /\/node_modules\/zod\/|\/packages\/(protocol|engine|builtins|worker|pi-agent)\//;
    expect(idle.some((url) => url.includes("/apps/worker/src/main.ts"))).toBe(true);
    expect(idle.filter((url) => heavy.test(url))).toEqual([]);

    const reserved = await c.call("runs.reserve", flow.reserve({ n: 4 }));
    if (reserved.kind !== "applied") throw new Error(JSON.stringify(reserved));
    const view = await finished(c, reserved.value.runId);
    expect(view.status).toBe("done");
    expect((await c.call("host.status", {})).idleWorkerPid).not.toBe(pid);
    // The same process ran the run, with what it had not loaded while idle.
    expect(loaded().some((url) => url.includes("/packages/engine/"))).toBe(true);
    expect(loaded().some((url) => url.includes("/node_modules/zod/"))).toBe(true);
    // The worker after a launch loads at once, with no launch announced: another may follow.
    const next = await idlePid(c, pid);
    const nextReport = join(box.dir, `${next}.modules`);
    await waitFor("the next idle worker to load the engine", () =>
      existsSync(nextReport) && readFileSync(nextReport, "utf8").includes("/packages/engine/")
        ? true
        : undefined,
    );
  }, 60_000);

  it("loads the run's modules on a launching client's hello, before any assignment, and replaces a woken worker no launch took", async () => {
    const [node, ...args] = WORKER_COMMAND;
    if (node === undefined) throw new Error("no worker command");
    const c = await open(
      { workerCommand: [node, "--import", moduleReport(box.dir), ...args] },
      { wakeLingerMs: 1_500 },
    );
    const pid = await idlePid(c);
    const report = join(box.dir, `${pid}.modules`);
    const loaded = () => (existsSync(report) ? readFileSync(report, "utf8") : "");
    await waitFor("the idle worker to listen on stdin", () => loaded().includes(IDLE_MARK) || undefined);
    expect(loaded()).not.toContain("/packages/engine/");

    if (host === undefined) throw new Error("no host");
    const launcher = await TestClient.connect(host.socketPath, false);
    try {
      await launcher.call("hello", { protocol: 1, client: "test", launching: true });
      // No run exists, so no assignment was written: the wake alone made it load.
      await waitFor(
        "the woken worker to load zod and the engine",
        () =>
          (loaded().includes("/packages/engine/") && loaded().includes("/node_modules/zod/")) || undefined,
      );
      expect(await c.call("runs.list", {})).toEqual([]);
      // No launch came: a fresh worker, which has loaded nothing, takes its place.
      const next = await idlePid(c, pid);
      await waitFor("the woken worker to exit", () => !isAlive(pid) || undefined);
      expect(next).not.toBe(pid);
      expect(logLines.some((line) => line.includes("unused; replaced"))).toBe(true);
    } finally {
      launcher.close();
    }
  }, 60_000);

  it("leaves no idle worker behind when the host stops", async () => {
    const c = await open();
    const pid = await idlePid(c);
    expect(isAlive(pid)).toBe(true);
    await host?.stop();
    expect(isAlive(pid)).toBe(false);
  });
});
