import { spawn, spawnSync } from "node:child_process";
import { readdirSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { HostAlreadyRunning, type RunningHost } from "../src/index.js";
import {
  HOST_MAIN,
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
    const probe = `require("node:net").connect(${JSON.stringify(host.socketPath)})
      .on("connect", () => { console.log("connected"); process.exit(0); })
      .on("error", (e) => { console.log(e.code); process.exit(0); });`;
    const result = spawnSync(process.execPath, ["-e", probe], {
      uid: 65534,
      gid: 65534,
      encoding: "utf8",
      timeout: 10_000,
    });
    expect(result.stdout.trim()).toBe("EACCES");
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
