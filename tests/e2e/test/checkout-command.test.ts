import { execFile, execFileSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, statSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { REPO, stopHost, userEnv } from "@piw/test-kit";

/**
 * The newcomer's one command: a fresh clone of HEAD, on a shell whose PATH has only the system's
 * folders (CI's Node 20, no pnpm), runs `./piw run …` to a completed run. The Node and pnpm it
 * bootstraps go to one cache folder shared across runs (CI's own, when `.ci/run` set it), so only the
 * first run ever downloads them; the clone's install and build are real each time.
 */

interface Ended {
  status: number | null;
  stdout: string;
  stderr: string;
}

const SYSTEM_PATH = "/usr/bin:/bin";
const CACHE = process.env.PIW_CI_CACHE ?? join(homedir(), ".cache", "piw-ci");

let root: string;
let clone: string;
let env: NodeJS.ProcessEnv;

function piw(args: string[], timeoutMs: number): Promise<Ended> {
  return new Promise((resolve) => {
    execFile(
      join(clone, "piw"),
      args,
      { cwd: clone, env, timeout: timeoutMs, maxBuffer: 64 << 20 },
      (error, stdout, stderr) => {
        const status = error === null ? 0 : typeof error.code === "number" ? error.code : null;
        resolve({ status, stdout, stderr });
      },
    );
  });
}

/** Whether this Node is one piw runs on; the system's decides whether `./piw` must bootstrap one. */
function systemNodeIsRecent(): boolean {
  try {
    const version = execFileSync("/usr/bin/env", ["node", "--version"], { env: { PATH: SYSTEM_PATH } });
    const [major = 0, minor = 0] = String(version).trim().slice(1).split(".").map(Number);
    return major > 22 || (major === 22 && minor >= 19);
  } catch {
    return false;
  }
}

beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), "piw-e2e-clone-"));
  clone = join(root, "piw");
  execFileSync("git", ["clone", "--quiet", REPO, clone]);
  // The user's own shell (its home holds npm's cache and pnpm's store; its CA settings reach the
  // registry), but with only the system's folders on PATH.
  env = userEnv(homedir(), {
    PATH: SYSTEM_PATH,
    PIW_BOOTSTRAP_CACHE: CACHE,
    PIW_HOME: join(root, "state"),
    NO_COLOR: "1",
  });
});

afterAll(async () => {
  await stopHost(join(root, "state"));
  rmSync(root, { recursive: true, force: true });
}, 60_000);

describe("./piw in a fresh clone, with only the system's PATH", () => {
  it("bootstraps what is missing, installs, builds and runs the main job to its completed line", async () => {
    const ran = await piw(["run", "examples/hello.workflow.ts", "say hi"], 1_200_000);
    expect(ran.status, ran.stderr).toBe(0);
    expect(ran.stdout).toMatch(/✓ hello completed/);
    // Set-up progress is on stderr only: stdout is the CLI's.
    expect(ran.stderr).toMatch(/^piw: installing dependencies/m);
    expect(ran.stderr).toMatch(/^piw: building the apps/m);
    expect(ran.stdout).not.toMatch(/^piw: /m);
    if (!systemNodeIsRecent())
      expect(existsSync(join(CACHE, "node22", "lib", "node_modules", "node", "bin"))).toBe(true);
  }, 1_260_000);

  it("does no set-up work once the clone is set up: --version prints the version and nothing else", async () => {
    const stamps = [join(clone, "node_modules", ".modules.yaml"), join(clone, ".nx", "piw-build.stamp")];
    const before = stamps.map((file) => statSync(file).mtimeMs);
    const version = await piw(["--version"], 60_000);
    expect(version).toEqual({ status: 0, stdout: expect.stringMatching(/^\d+\.\d+\.\d+\n$/), stderr: "" });
    expect(stamps.map((file) => statSync(file).mtimeMs)).toEqual(before);
  }, 90_000);
});
