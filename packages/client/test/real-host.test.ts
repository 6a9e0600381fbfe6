import { spawn } from "node:child_process";
import {
  chmodSync,
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import type { RunView } from "@piw/protocol";
import { isProcessAlive, readProcessStat } from "@piw/state-dir";
import { hostPidIn, removeTree, waitFor } from "@piw/test-kit";
import { afterEach, describe, expect, it } from "vitest";
import { type CallParams, connectHost, type HostClient, HostConnection } from "../src/index.js";

// The real host, from source. An absolute loader path: the host runs in another folder.
const repo = resolve(import.meta.dirname, "../../..");
const hostMain = join(repo, "apps/host/src/main.ts");
const hostCommand = [process.execPath, "--import", join(repo, "node_modules/tsx/dist/loader.mjs"), hostMain];
// Runs reserved here need no real worker: one that exits at once is enough to make views change.
process.env.PIW_WORKER_COMMAND = JSON.stringify([process.execPath, "-e", "process.exit(1)"]);
process.env.TSX_TSCONFIG_PATH = join(repo, "tsconfig.json");

const SLOW = 90_000;
const homes: string[] = [];

function makeHome(): string {
  const home = mkdtempSync(join(tmpdir(), "piw-client-host-"));
  homes.push(home);
  return home;
}

/** Live host processes of one state folder, found by their command line and PIW_HOME (Linux /proc). */
function hostProcesses(home: string): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (!isProcessAlive(Number(entry))) continue;
      const cmdline = readFileSync(`/proc/${entry}/cmdline`, "utf8");
      if (!cmdline.includes(hostMain)) continue;
      const environ = readFileSync(`/proc/${entry}/environ`, "utf8").split("\0");
      if (environ.includes(`PIW_HOME=${home}`)) pids.push(Number(entry));
    } catch {
      // The process ended while we looked.
    }
  }
  return pids;
}

afterEach(async () => {
  for (const home of homes.splice(0)) {
    for (const pid of hostProcesses(home)) process.kill(pid, "SIGKILL");
    removeTree(home);
  }
});

/** A run the host accepts without any workflow code: the worker that would run it exits at once. */
function reserveRequest(): CallParams<"runs.reserve"> {
  return {
    workflowName: "probe",
    source: { kind: "file", path: "/nonexistent/probe.workflow.ts", sha256: "0".repeat(64) },
    definitionDigest: "probe-digest",
    manifest: {
      version: 1,
      workflow: "probe",
      startPath: "only",
      exits: ["done"],
      maxSteps: 10,
      nodes: [{ path: "only", name: "only", scope: "", kind: "compute", title: "only" }],
      mounts: [],
      edges: [{ from: "only", to: { kind: "exit", exit: "done" } }],
    },
    input: null,
    origin: { kind: "cli" },
  };
}

describe("auto-start against the real host", () => {
  it(
    "four clients starting at once end up talking to exactly one host",
    async () => {
      const home = makeHome();
      const clients: HostClient[] = await Promise.all(
        [1, 2, 3, 4].map(() =>
          connectHost({ stateDir: home, client: "test", hostCommand, timeoutMs: 20_000 }),
        ),
      );
      const pids = new Set(clients.map((c) => c.hello.hostPid));
      expect(pids.size).toBe(1);
      const [pid] = [...pids];
      expect(hostPidIn(home)).toBe(pid);
      // The hosts that lost the lock race exit on their own ("already running").
      await waitFor("one host process", () => hostProcesses(home).length === 1);
      expect(hostProcesses(home)).toEqual([pid]);
      const status = await clients[0]?.call("host.status");
      expect(status).toMatchObject({ pid, stateDir: home });
      for (const client of clients) client.close();
    },
    SLOW,
  );

  it(
    "does not start a host when auto-start is off",
    async () => {
      const home = makeHome();
      await expect(
        connectHost({ stateDir: home, client: "test", autoStart: false, hostCommand }),
      ).rejects.toMatchObject({ reason: "not_running" });
      expect(hostProcesses(home)).toEqual([]);
    },
    SLOW,
  );
});

describe("auto-start when a host is gone, going or refusing", () => {
  it(
    "starts a new host at once when the killed one is a zombie nobody reaps",
    async () => {
      const home = makeHome();
      // The host's parent execs `sleep`, which never reaps it: a kill -9 leaves a zombie behind,
      // as a host under a PID 1 that does not reap does.
      const quoted = hostCommand.map((a) => `'${a}'`).join(" ");
      const parent = spawn("sh", ["-c", `${quoted} & exec sleep 120`], {
        env: { ...process.env, PIW_HOME: home },
        stdio: "ignore",
      });
      try {
        let first: HostClient | undefined;
        for (let i = 0; i < 400 && first === undefined; i += 1) {
          first = await connectHost({ stateDir: home, client: "test", autoStart: false }).catch(
            () => undefined,
          );
          if (first === undefined) await new Promise((r) => setTimeout(r, 50));
        }
        if (first === undefined) throw new Error("the first host never served");
        const killed = first.hello.hostPid;
        first.close();
        process.kill(killed, "SIGKILL");
        await waitFor("the killed host to be a zombie", () => readProcessStat(killed)?.state === "Z");
        // Before: the new host took the zombie for a live owner, said "already running", and the
        // client waited out its timeout to report a stale socket.
        const client = await connectHost({ stateDir: home, client: "test", hostCommand, timeoutMs: 15_000 });
        expect(client.hello.hostPid).not.toBe(killed);
        expect(hostPidIn(home)).toBe(client.hello.hostPid);
        client.close();
      } finally {
        parent.kill("SIGKILL");
      }
    },
    SLOW,
  );

  it(
    "starts a host again when the one it started yielded to a lock holder that has since ended",
    async () => {
      const home = makeHome();
      // A lock holder that is alive when the started host looks, and gone right after (a host that
      // was stopping). Before: the client waited out its timeout, so the user had to run it again.
      const holder = spawn("sleep", ["60"], { stdio: "ignore" });
      const pid = holder.pid as number;
      let connecting: Promise<HostClient> | undefined;
      try {
        await waitFor("the holder to start", () => readProcessStat(pid) !== null);
        writeFileSync(join(home, "host.lock"), `${pid} ${readProcessStat(pid)?.startTime}\n`, {
          mode: 0o600,
        });
        chmodSync(home, 0o700);
        connecting = connectHost({ stateDir: home, client: "test", hostCommand, timeoutMs: 30_000 });
        connecting.catch(() => {});
        let started = false;
        await waitFor("the started host to yield to the holder", () => {
          const running = hostProcesses(home).length > 0;
          started ||= running;
          return started && !running;
        });
      } finally {
        holder.kill("SIGKILL");
      }
      const client = await connecting;
      expect(client.hello.hostPid).not.toBe(pid);
      expect(hostPidIn(home)).toBe(client.hello.hostPid);
      client.close();
    },
    SLOW,
  );

  it(
    "says why the host it started refused to start",
    async () => {
      const home = makeHome();
      const target = join(makeHome(), "not-a-database.txt");
      writeFileSync(target, "keep me\n", { mode: 0o644 });
      symlinkSync(target, join(home, "state.db"));
      const outcome = await connectHost({
        stateDir: home,
        client: "test",
        hostCommand,
        timeoutMs: 20_000,
      }).catch((e: unknown) => e);
      expect(outcome).toMatchObject({ name: "HostUnavailable", reason: "start_failed" });
      // Before: "the host exited with code 1 before it answered".
      expect((outcome as Error).message).toContain(
        `the host refused to start: piw-host: ${join(home, "state.db")} (the state database) is a symbolic link`,
      );
      expect(readFileSync(target, "utf8")).toBe("keep me\n");
      expect(statSync(target).mode & 0o777).toBe(0o644);
    },
    SLOW,
  );
});

describe("HostConnection against the real host", () => {
  it(
    "follows one Pi session: the host sends only that session's runs, an all-runs subscriber gets every run",
    async () => {
      const connection = await HostConnection.open({
        stateDir: makeHome(),
        client: "test",
        hostCommand,
        timeoutMs: 20_000,
      });
      const session: string[] = [];
      const every = new Set<string>();
      await connection.subscribe({ sessionId: "session-a" }, (view) => session.push(view.runId));
      await connection.subscribe(undefined, (view) => every.add(view.runId));
      const reserve = async (origin: CallParams<"runs.reserve">["origin"]) => {
        const reserved = await connection.call("runs.reserve", { ...reserveRequest(), origin });
        if (reserved.kind !== "applied") throw new Error(JSON.stringify(reserved));
        return reserved.value.runId;
      };
      const mine = await reserve({ kind: "pi", sessionId: "session-a" });
      const theirs = await reserve({ kind: "pi", sessionId: "session-b" });
      const cli = await reserve({ kind: "cli" });
      // One socket keeps the order of pushes: once every run's view came, the session's would have too.
      await waitFor("every run's view", () => [mine, theirs, cli].every((id) => every.has(id)));
      expect(session.length).toBeGreaterThan(0);
      expect(new Set(session)).toEqual(new Set([mine]));
      connection.close();
    },
    SLOW,
  );
  it(
    "reconnects after the host is killed, restarting it, and renews its subscriptions",
    async () => {
      const home = makeHome();
      const connection = await HostConnection.open({
        stateDir: home,
        client: "test",
        hostCommand,
        timeoutMs: 20_000,
        reconnect: { initialDelayMs: 50, maxAttempts: 5 },
      });
      const first = (await connection.call("host.status")).pid;

      const reserved = await connection.call("runs.reserve", reserveRequest());
      expect(reserved.kind).toBe("applied");
      const runId = reserved.kind === "applied" ? reserved.value.runId : "";
      const views: RunView[] = [];
      await connection.subscribe(runId, (view) => views.push(view));
      const everyRun: string[] = [];
      await connection.subscribe(undefined, (view) => everyRun.push(view.runId));
      // Subscribing delivers the run's current view.
      expect(views.at(0)?.runId).toBe(runId);

      const disconnected = new Promise((r) => connection.once("disconnect", r));
      const reconnected = new Promise((r) => connection.once("reconnect", r));
      process.kill(first, "SIGKILL");
      await disconnected;
      const seenBefore = views.length;
      await reconnected;

      const second = (await connection.call("host.status")).pid;
      expect(second).not.toBe(first);
      expect(hostProcesses(home)).toEqual([second]);
      // The run subscription was renewed and handed the current view again.
      expect(views.length).toBeGreaterThan(seenBefore);
      expect(views.at(-1)?.runId).toBe(runId);
      // The all-runs subscription was renewed too: a new run's view reaches it.
      const another = await connection.call("runs.reserve", reserveRequest());
      const anotherId = another.kind === "applied" ? another.value.runId : "";
      await waitFor("a view of the new run", () => everyRun.includes(anotherId));
      connection.close();
    },
    SLOW,
  );

  it(
    "sends a run-creating request again when the host died before replying, and gets the run it made",
    async () => {
      const home = makeHome();
      const once = join(home, "host-crashed");
      // Hosts this connection starts inherit the environment; the once-file lets only the first die.
      process.env.PIW_HOST_CRASH_AT = "after-create";
      process.env.PIW_HOST_CRASH_ONCE_FILE = once;
      try {
        const connection = await HostConnection.open({
          stateDir: home,
          client: "test",
          hostCommand,
          timeoutMs: 20_000,
          reconnect: { initialDelayMs: 50, maxAttempts: 5 },
        });
        const first = (await connection.call("host.status")).pid;
        const reserved = await connection.call("runs.reserve", reserveRequest());
        expect(existsSync(once)).toBe(true);
        // The second host answered the resend with the run the first one committed.
        expect(reserved.kind).toBe("adopted");
        const second = (await connection.call("host.status")).pid;
        expect(second).not.toBe(first);
        const runs = await connection.call("runs.list", {});
        expect(runs.map((run) => run.runId)).toEqual([
          reserved.kind === "adopted" ? reserved.value.runId : "",
        ]);
        connection.close();
      } finally {
        delete process.env.PIW_HOST_CRASH_AT;
        delete process.env.PIW_HOST_CRASH_ONCE_FILE;
      }
    },
    SLOW,
  );

  it(
    "gives up with `unavailable` when no host can be reached again",
    async () => {
      const home = makeHome();
      const connection = await HostConnection.open({
        stateDir: home,
        client: "test",
        hostCommand,
        timeoutMs: 20_000,
        reconnect: { initialDelayMs: 20, maxAttempts: 2 },
      });
      const pid = (await connection.call("host.status")).pid;
      connection.close();
      // Without a host command it may not start another host, so reconnecting must fail.
      const stranded = await HostConnection.open({
        stateDir: home,
        client: "test",
        autoStart: false,
        reconnect: { initialDelayMs: 20, maxAttempts: 2 },
      });
      const gaveUp = new Promise((r) => stranded.once("unavailable", r));
      process.kill(pid, "SIGKILL");
      await expect(gaveUp).resolves.toMatchObject({ name: "HostUnavailable" });
      await expect(stranded.call("host.status")).rejects.toMatchObject({ name: "HostUnavailable" });
      stranded.close();
    },
    SLOW,
  );
});
