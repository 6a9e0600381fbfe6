import { spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { removeTree } from "@piw/test-kit";

/**
 * The host and the preflight child keep V8's code cache in the state folder's private compile-cache
 * (made by the workers), so a host restart and every `piw run`'s preflight skip most of their
 * compiling. Node reports where a process's cache is when NODE_DEBUG_NATIVE=COMPILE_CACHE; these run
 * the built entries and read that report.
 */

const APPS = join(import.meta.dirname, "..", "..");
const ENTRIES = {
  host: join(APPS, "host", "dist", "main.js"),
  preflight: join(APPS, "worker", "dist", "preflight.js"),
};
const scratch = mkdtempSync(join(tmpdir(), "piw-compile-cache-"));

afterAll(() => removeTree(scratch));

function stateDir(name: string, withCache: boolean): string {
  const dir = join(scratch, name);
  mkdirSync(dir, { mode: 0o700 });
  if (withCache) mkdirSync(join(dir, "compile-cache"), { mode: 0o700 });
  return dir;
}

/** Starts `entry`, collects its stderr until `done` holds or `ms` pass, then ends it. */
function stderrOf(
  entry: string,
  state: string,
  done: (stderr: string) => boolean,
  ms: number,
): Promise<string> {
  if (!existsSync(entry)) throw new Error(`${entry} is missing: run pnpm build first`);
  const child = spawn(process.execPath, [entry], {
    cwd: state,
    env: {
      ...process.env,
      PIW_HOME: state,
      NODE_DEBUG_NATIVE: "COMPILE_CACHE",
      // A stand-in worker that stays silent, so only the host's own lines reach its stderr.
      PIW_WORKER_COMMAND: JSON.stringify([process.execPath, "-e", "setInterval(() => {}, 1000)"]),
    },
    stdio: ["ignore", "ignore", "pipe", "ipc"],
  });
  let stderr = "";
  return new Promise((resolve) => {
    const stop = () => {
      clearInterval(poll);
      clearTimeout(timer);
      child.kill("SIGTERM");
    };
    const poll = setInterval(() => {
      if (done(stderr)) stop();
    }, 50);
    const timer = setTimeout(stop, ms);
    child.stderr?.setEncoding("utf8");
    child.stderr?.on("data", (chunk: string) => {
      stderr += chunk;
    });
    child.once("exit", () => {
      stop();
      resolve(stderr);
    });
  });
}

describe("the host and the preflight child use the state folder's compile cache", () => {
  it.each(["host", "preflight"] as const)(
    "the %s keeps its code cache in <state>/compile-cache",
    async (name) => {
      const state = stateDir(`${name}-cached`, true);
      const cache = join(state, "compile-cache");
      const stderr = await stderrOf(ENTRIES[name], state, (text) => text.includes(cache), 20_000);
      expect(stderr).toContain(`[compile cache] resolved path ${cache}`);
    },
    30_000,
  );

  it.each(["host", "preflight"] as const)(
    "the %s creates no cache where the workers made none",
    async (name) => {
      // The host is up once it serves on its socket; the preflight child has nothing to show: give it 3 s.
      const state = stateDir(`${name}-bare`, false);
      const served = () => name === "host" && existsSync(join(state, "host.sock"));
      const stderr = await stderrOf(ENTRIES[name], state, served, name === "host" ? 20_000 : 3_000);
      expect(stderr).not.toContain("[compile cache] resolved path");
      expect(existsSync(join(state, "compile-cache"))).toBe(false);
    },
    30_000,
  );
});
