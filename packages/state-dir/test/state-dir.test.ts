import { spawn, spawnSync } from "node:child_process";
import { chmodSync, mkdirSync, mkdtempSync, renameSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { removeTree, waitFor } from "@piw/test-kit";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  confirmSameFile,
  createPrivateFile,
  isPrivateDir,
  isProcessAlive,
  prepareStateDir,
  readProcessStat,
  StateDirRefused,
} from "../src/index.js";

let root: string;
beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), "piw-state-dir-"));
});
afterEach(() => removeTree(root));

describe("isProcessAlive", () => {
  it("is true for this process, with or without its start time", () => {
    const startTime = readProcessStat(process.pid)?.startTime;
    expect(startTime).toMatch(/^\d+$/);
    expect(isProcessAlive(process.pid)).toBe(true);
    expect(isProcessAlive(process.pid, startTime)).toBe(true);
  });

  it("is false for a pid now held by another process (another start time)", () => {
    const startTime = Number(readProcessStat(process.pid)?.startTime);
    expect(isProcessAlive(process.pid, String(startTime + 1))).toBe(false);
  });

  it("is false for a process that has exited and been reaped", () => {
    const pid = spawnSync(process.execPath, ["-e", "process.stdout.write(String(process.pid))"], {
      encoding: "utf8",
    }).stdout;
    expect(isProcessAlive(Number(pid))).toBe(false);
  });

  it("is false for a zombie: exited, but never reaped by its parent", async () => {
    const parent = spawn("sh", ["-c", "sleep 0 & echo $!; exec sleep 30"], {
      stdio: ["ignore", "pipe", "ignore"],
    });
    try {
      let out = "";
      parent.stdout?.setEncoding("utf8").on("data", (d: string) => {
        out += d;
      });
      await waitFor("the child's pid", () => out.includes("\n"), 5_000);
      const pid = Number(out.trim());
      await waitFor("a zombie", () => readProcessStat(pid)?.state === "Z", 5_000);
      // signal 0 still reaches a zombie; /proc says what it is.
      expect(() => process.kill(pid, 0)).not.toThrow();
      expect(isProcessAlive(pid)).toBe(false);
      expect(isProcessAlive(pid, readProcessStat(pid)?.startTime)).toBe(false);
    } finally {
      parent.kill("SIGKILL");
    }
  });

  it("is false for pids that cannot be processes", () => {
    for (const pid of [0, -1, 1.5, Number.NaN]) expect(isProcessAlive(pid)).toBe(false);
  });
});

describe("state files", () => {
  it("notices a state file replaced after it was checked", () => {
    const dir = prepareStateDir(join(root, "state")).stateDir;
    const file = join(dir, "state.db");
    const identity = createPrivateFile(file, "the state database");
    expect(() => confirmSameFile(file, "the state database", identity)).not.toThrow();
    writeFileSync(join(dir, "other"), "");
    renameSync(join(dir, "other"), file);
    expect(() => confirmSameFile(file, "the state database", identity)).toThrow(StateDirRefused);
  });

  it("creates the state directory 0700 and tightens one of its own", () => {
    const paths = prepareStateDir(join(root, "a", "state"));
    expect(statSync(paths.stateDir).mode & 0o777).toBe(0o700);
    expect(paths.databasePath).toBe(join(root, "a", "state", "state.db"));
  });
});

describe("isPrivateDir", () => {
  it("is true only for an existing directory of ours that no one else may write, and creates nothing", () => {
    const dir = join(root, "mine");
    expect(isPrivateDir(dir)).toBe(false);
    expect(() => statSync(dir)).toThrow();
    mkdirSync(dir, { mode: 0o700 });
    expect(isPrivateDir(dir)).toBe(true);
    chmodSync(dir, 0o755);
    expect(isPrivateDir(dir)).toBe(true);
    chmodSync(dir, 0o775);
    expect(isPrivateDir(dir)).toBe(false);
    chmodSync(dir, 0o700);
    writeFileSync(join(root, "file"), "x");
    expect(isPrivateDir(join(root, "file"))).toBe(false);
  });
});
