import { type ChildProcess, spawn } from "node:child_process";
import { chmodSync, chownSync, copyFileSync, lchownSync, mkdirSync, mkdtempSync, symlinkSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { connectHost, HostUnavailable } from "../src/index.js";
import { removeTree } from "@piw/test-kit";

// A socket at $PIW_HOME/host.sock is trusted only when this user alone could have put it there:
// otherwise the client refuses before it connects, so not even `hello` (with our pid) leaves, let
// alone a run's input. Each fake host below answers `hello` like a real one, so a client that did
// connect would go on.

const OTHER_UID = 65534;
const asRoot = process.getuid?.() === 0;
const repo = resolve(import.meta.dirname, "../../..");
const hostCommand = [
  process.execPath,
  "--import",
  join(repo, "node_modules/tsx/dist/loader.mjs"),
  join(repo, "apps/host/src/main.ts"),
];

/** Answers every request line as `hello` would be answered, and reports each connection and line on stdout. */
const FAKE_HOST = `
const net = require("node:net");
const [path] = process.argv.slice(1);
net.createServer((socket) => {
  process.stdout.write("connection\\n");
  let buffer = "";
  socket.on("data", (chunk) => {
    buffer += chunk;
    for (let at = buffer.indexOf("\\n"); at >= 0; at = buffer.indexOf("\\n")) {
      const line = buffer.slice(0, at);
      buffer = buffer.slice(at + 1);
      process.stdout.write("frame " + line + "\\n");
      const id = JSON.parse(line).id;
      socket.write(JSON.stringify({ v: 1, id, result: { protocol: 1, hostPid: process.pid, stateDir: "/fake", version: "fake" } }) + "\\n");
    }
  });
}).listen(path, () => process.stdout.write("listening\\n"));
`;

let base: string;
const cleanups: Array<() => void> = [];
beforeEach(() => {
  base = mkdtempSync(join(tmpdir(), "piw-untrusted-"));
});
afterEach(() => {
  for (const cleanup of cleanups.splice(0).reverse()) cleanup();
  removeTree(base);
});

interface FakeHost {
  /** Everything the fake host saw: `connection` and `frame …` lines. */
  seen(): string[];
}

/** The fake host as a real process of `uid` (a copy of Node any user may run), bound at `socketPath`. */
async function fakeHostAs(uid: number | undefined, socketPath: string): Promise<FakeHost> {
  let node = process.execPath;
  if (uid !== undefined) {
    // The Node in use may live under a home only its owner can enter (as `.ci/run` installs it).
    const bin = join(base, "bin");
    mkdirSync(bin, { mode: 0o755 });
    chmodSync(base, 0o755);
    node = join(bin, "node");
    copyFileSync(process.execPath, node);
    chmodSync(node, 0o755);
  }
  const child: ChildProcess = spawn(node, ["-e", FAKE_HOST, socketPath], {
    stdio: ["ignore", "pipe", "pipe"],
    ...(uid !== undefined ? { uid, gid: uid } : {}),
  });
  cleanups.push(() => child.kill("SIGKILL"));
  let out = "";
  let err = "";
  child.stdout?.setEncoding("utf8").on("data", (d: string) => {
    out += d;
  });
  child.stderr?.setEncoding("utf8").on("data", (d: string) => {
    err += d;
  });
  const spawnError = new Promise<Error>((res) => child.once("error", res));
  const deadline = Date.now() + 10_000;
  while (!out.includes("listening\n")) {
    const failed = await Promise.race([spawnError, new Promise((r) => setTimeout(r, 20, null))]);
    if (failed) throw new Error(`the fake host could not run: ${String(failed)}`);
    if (child.exitCode !== null || Date.now() > deadline)
      throw new Error(`the fake host did not listen: ${err}`);
  }
  return { seen: () => out.split("\n").filter((l) => l !== "" && l !== "listening") };
}

/** A fake host in this process (this user's own), for cases where the socket's place is the problem. */
async function fakeHostHere(socketPath: string): Promise<FakeHost> {
  const seen: string[] = [];
  const server: Server = createServer((socket) => {
    seen.push("connection");
    socket.setEncoding("utf8");
    socket.on("data", (chunk: string) => {
      for (const line of chunk.split("\n").filter(Boolean)) {
        seen.push(`frame ${line}`);
        const id = (JSON.parse(line) as { id: number }).id;
        socket.write(
          `${JSON.stringify({ v: 1, id, result: { protocol: 1, hostPid: process.pid, stateDir: "/fake", version: "fake" } })}\n`,
        );
      }
    });
  });
  await new Promise<void>((res) => server.listen(socketPath, res));
  cleanups.push(() => server.close());
  return { seen: () => seen };
}

async function expectRefused(stateDir: string, fake: FakeHost, says: string): Promise<void> {
  // With a host command too: an untrusted state folder is no reason to start a host in it.
  const outcome = await connectHost({ stateDir, client: "test", hostCommand, timeoutMs: 5_000 }).then(
    (client) => {
      client.close();
      return new Error("connected");
    },
    (error: unknown) => error,
  );
  expect(outcome).toBeInstanceOf(HostUnavailable);
  expect(outcome).toMatchObject({ reason: "untrusted" });
  expect((outcome as Error).message).toContain(says);
  // Give a connection that did happen time to be reported.
  await new Promise((r) => setTimeout(r, 200));
  expect(fake.seen()).toEqual([]);
}

describe("a socket this user alone could not have put there", () => {
  it.runIf(asRoot)("a state folder of another user, with that user's host in it", async () => {
    const stateDir = join(base, "state");
    mkdirSync(stateDir, { mode: 0o700 });
    chownSync(stateDir, OTHER_UID, OTHER_UID);
    const fake = await fakeHostAs(OTHER_UID, join(stateDir, "host.sock"));
    await expectRefused(stateDir, fake, `(the state directory) belongs to another user (uid ${OTHER_UID})`);
  });

  it.runIf(asRoot)("another user's socket in this user's own folder", async () => {
    const stateDir = join(base, "state");
    mkdirSync(stateDir, { mode: 0o700 });
    const socketPath = join(stateDir, "host.sock");
    const fake = await fakeHostHere(socketPath);
    lchownSync(socketPath, OTHER_UID, OTHER_UID);
    await expectRefused(stateDir, fake, `(the host socket) belongs to another user (uid ${OTHER_UID})`);
  });

  it("a state folder that other users may write to", async () => {
    const stateDir = join(base, "state");
    mkdirSync(stateDir);
    chmodSync(stateDir, 0o777);
    const fake = await fakeHostHere(join(stateDir, "host.sock"));
    await expectRefused(stateDir, fake, "is writable by other users (mode 777)");
  });

  it("a socket other users may write to", async () => {
    const stateDir = join(base, "state");
    mkdirSync(stateDir, { mode: 0o700 });
    const socketPath = join(stateDir, "host.sock");
    const fake = await fakeHostHere(socketPath);
    chmodSync(socketPath, 0o666);
    await expectRefused(stateDir, fake, "(the host socket) is writable by other users (mode 666)");
  });

  it("host.sock as a symbolic link to a socket elsewhere", async () => {
    const stateDir = join(base, "state");
    mkdirSync(stateDir, { mode: 0o700 });
    const elsewhere = join(base, "elsewhere.sock");
    const fake = await fakeHostHere(elsewhere);
    symlinkSync(elsewhere, join(stateDir, "host.sock"));
    await expectRefused(stateDir, fake, "is a symbolic link, not the host's socket");
  });

  it("the user's own folder and socket are trusted as before", async () => {
    const stateDir = join(base, "state");
    mkdirSync(stateDir, { mode: 0o700 });
    const fake = await fakeHostHere(join(stateDir, "host.sock"));
    const client = await connectHost({ stateDir, client: "test" });
    client.close();
    expect(fake.seen()[0]).toBe("connection");
  });
});
