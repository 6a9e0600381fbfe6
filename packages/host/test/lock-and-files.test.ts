import { spawn, spawnSync } from "node:child_process";
import { chmodSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { readProcessStat } from "@piw/state-dir";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { waitFor } from "@piw/test-kit";
import { HostAlreadyRunning, type RunningHost } from "../src/index.js";
import {
  HOST_MAIN,
  nodeForAnyUser,
  OTHER_UID,
  REPO,
  type Sandbox,
  sandbox,
  start,
  TSX_ENV,
  TSX_LOADER,
  WORKER_COMMAND,
} from "./host-fixture.js";

let box: Sandbox;
let host: RunningHost | undefined;
beforeEach(() => {
  box = sandbox();
});
afterEach(async () => {
  await host?.stop();
  host = undefined;
  box.cleanup();
});

/** A process that has exited but is never reaped: its parent execs `sleep`, which never waits. */
async function zombie(): Promise<{ pid: number; reap(): void }> {
  const parent = spawn("sh", ["-c", "sleep 0 & echo $!; exec sleep 60"], {
    stdio: ["ignore", "pipe", "ignore"],
  });
  let out = "";
  parent.stdout?.setEncoding("utf8").on("data", (d: string) => {
    out += d;
  });
  await waitFor("the child's pid", () => out.includes("\n"), 5_000);
  const pid = Number(out.trim());
  await waitFor("the child to become a zombie", () => readProcessStat(pid)?.state === "Z", 5_000);
  return { pid, reap: () => parent.kill("SIGKILL") };
}

function mode(path: string): number {
  return statSync(path).mode & 0o777;
}

function deadPid(): number {
  const child = spawnSync(process.execPath, ["-e", "process.stdout.write(String(process.pid))"], {
    encoding: "utf8",
  });
  return Number(child.stdout);
}

describe("host lock and state files", () => {
  it("creates the state directory 0700 and the socket, lock and database 0600", async () => {
    host = await start(box);
    expect(mode(box.stateDir)).toBe(0o700);
    expect(mode(host.socketPath)).toBe(0o600);
    expect(statSync(host.socketPath).isSocket()).toBe(true);
    expect(mode(join(box.stateDir, "host.lock"))).toBe(0o600);
    for (const file of readdirSync(box.stateDir)) {
      if (file.startsWith("state.db")) expect(mode(join(box.stateDir, file)), file).toBe(0o600);
    }
  });

  it.runIf(process.getuid?.() === 0)("refuses connections from another user", async () => {
    host = await start(box);
    // The socket's own mode is what is under test, so the folders above it let anyone pass.
    chmodSync(box.dir, 0o755);
    chmodSync(box.stateDir, 0o755);
    const node = nodeForAnyUser();
    try {
      const probe = `require("node:net").connect(${JSON.stringify(host.socketPath)})
        .on("connect", () => { console.log("connected"); process.exit(0); })
        .on("error", (e) => { console.log(e.code); process.exit(0); });`;
      const result = spawnSync(node.path, ["-e", probe], {
        uid: OTHER_UID,
        gid: OTHER_UID,
        encoding: "utf8",
        timeout: 10_000,
      });
      // A probe that could not even run would read as a pass or a puzzle; say what happened.
      expect(result.error, `the probe could not run as uid ${OTHER_UID}`).toBeUndefined();
      expect(result.stderr).toBe("");
      expect(result.stdout.trim()).toBe("EACCES");
    } finally {
      node.cleanup();
    }
  });

  it("refuses a second host in the same state directory, naming the running one", async () => {
    host = await start(box);
    const second = await start(box).catch((e: unknown) => e);
    expect(second).toBeInstanceOf(HostAlreadyRunning);
    expect((second as HostAlreadyRunning).pid).toBe(process.pid);
    // The first host is untouched and still serves.
    expect(statSync(host.socketPath).isSocket()).toBe(true);
  });

  it("the piw-host binary exits 0 and names the running host", async () => {
    host = await start(box);
    const result = spawnSync(process.execPath, ["--import", TSX_LOADER, HOST_MAIN], {
      cwd: REPO,
      env: {
        ...process.env,
        ...TSX_ENV,
        PIW_HOME: box.stateDir,
        PIW_WORKER_COMMAND: JSON.stringify(WORKER_COMMAND),
      },
      encoding: "utf8",
      timeout: 20_000,
    });
    expect(result.status).toBe(0);
    expect(result.stderr).toContain(`piw-host: already running (pid ${process.pid})`);
  });

  it("takes over a stale lock and socket left by a dead host", async () => {
    host = await start(box);
    await host.stop();
    // What kill -9 leaves behind: a lock naming a dead pid, and a socket file nobody listens on.
    const pid = deadPid();
    writeFileSync(join(box.stateDir, "host.lock"), `${pid} -\n`, { mode: 0o600 });
    writeFileSync(join(box.stateDir, "host.sock"), "");
    host = await start(box);
    expect(statSync(host.socketPath).isSocket()).toBe(true);
    expect(readdirSync(box.stateDir).filter((f) => f.startsWith("host.lock"))).toEqual(["host.lock"]);
  });

  it("takes over the lock of a killed host that nobody reaped (a zombie)", async () => {
    const dead = await zombie();
    try {
      const stat = readProcessStat(dead.pid);
      expect(stat?.state).toBe("Z");
      // The lock exactly as that host wrote it: its pid and its start time, both still in /proc.
      mkdirSync(box.stateDir, { recursive: true, mode: 0o700 });
      writeFileSync(join(box.stateDir, "host.lock"), `${dead.pid} ${stat?.startTime}\n`, { mode: 0o600 });
      host = await start(box);
      expect(readFileSync(join(box.stateDir, "host.lock"), "utf8").split(" ")[0]).toBe(String(process.pid));
    } finally {
      dead.reap();
    }
  });

  it("takes over a lock whose pid now belongs to another process (pid reuse)", async () => {
    const other = spawn("sleep", ["30"], { stdio: "ignore" });
    try {
      const pid = other.pid as number;
      await waitFor("sleep to start", () => readProcessStat(pid) !== null, 5_000);
      const startTime = readProcessStat(pid)?.startTime;
      mkdirSync(box.stateDir, { recursive: true, mode: 0o700 });
      // The same pid, but the start time of the host that had it before.
      writeFileSync(join(box.stateDir, "host.lock"), `${pid} ${Number(startTime) - 1}\n`, { mode: 0o600 });
      host = await start(box);
      expect(readFileSync(join(box.stateDir, "host.lock"), "utf8").split(" ")[0]).toBe(String(process.pid));
    } finally {
      other.kill("SIGKILL");
    }
  });

  it("of hosts started at once, exactly one runs", async () => {
    const env = {
      ...process.env,
      ...TSX_ENV,
      PIW_HOME: box.stateDir,
      PIW_WORKER_COMMAND: JSON.stringify(WORKER_COMMAND),
    };
    const children = Array.from({ length: 4 }, () =>
      spawn(process.execPath, ["--import", TSX_LOADER, HOST_MAIN], {
        cwd: REPO,
        env,
        stdio: ["ignore", "ignore", "pipe"],
      }),
    );
    const stderr = children.map((c) => {
      let text = "";
      c.stderr?.setEncoding("utf8").on("data", (d: string) => {
        text += d;
      });
      return () => text;
    });
    // Three exit 0 saying another runs; one keeps serving until we stop it.
    const exits: Array<number | null> = children.map(() => null);
    for (const [i, c] of children.entries()) c.on("exit", (code) => (exits[i] = code ?? -1));
    const deadline = Date.now() + 20_000;
    while (exits.filter((e) => e !== null).length < 3 && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 50));
    await new Promise((r) => setTimeout(r, 300));
    const running = children.filter((_, i) => exits[i] === null);
    expect(running).toHaveLength(1);
    for (const [i, code] of exits.entries()) {
      if (code === null) continue;
      expect(code).toBe(0);
      expect(stderr[i]?.()).toContain("already running");
    }
    const survivor = running[0];
    if (!survivor) throw new Error("no host is running");
    const stopped = new Promise((res) => survivor.on("exit", res));
    survivor.kill("SIGTERM");
    await stopped;
    expect(readdirSync(box.stateDir).filter((f) => f.startsWith("host."))).toEqual([]);
  }, 40_000);
});
