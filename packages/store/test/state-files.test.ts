import { execFileSync } from "node:child_process";
import {
  chownSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { RunStore, StoreError } from "../src/index.js";

// The store opens state.db by name (better-sqlite3 takes a path), so every name SQLite will touch
// is checked first without following links, and a refusal changes nothing anywhere.

const OTHER_UID = 65534;
let root: string;
let stateDir: string;
beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), "piw-state-files-"));
  stateDir = join(root, "state");
  mkdirSync(stateDir, { mode: 0o700 });
});
afterEach(() => rmSync(root, { recursive: true, force: true, maxRetries: 20, retryDelay: 100 }));

function refused(): StoreError {
  let error: unknown;
  try {
    RunStore.open({ stateDir }).close();
  } catch (caught) {
    error = caught;
  }
  expect(error).toBeInstanceOf(StoreError);
  expect((error as StoreError).code).toBe("insecure_path");
  return error as StoreError;
}

/** A file outside the state directory that a planted link points at. */
function outsideFile(): { path: string; unchanged(): void } {
  const path = join(root, "precious.txt");
  const text = "someone else's file\n";
  writeFileSync(path, text, { mode: 0o644 });
  return {
    path,
    unchanged() {
      expect(readFileSync(path, "utf8")).toBe(text);
      expect(statSync(path).mode & 0o777).toBe(0o644);
    },
  };
}

describe("state files the store refuses", () => {
  for (const name of ["state.db", "state.db-wal", "state.db-shm", "state.db-journal"]) {
    it(`${name} as a symbolic link: refused, and its target neither chmodded nor written`, () => {
      const target = outsideFile();
      symlinkSync(target.path, join(stateDir, name));
      const error = refused();
      expect(error.message).toContain(`${join(stateDir, name)}`);
      expect(error.message).toContain("is a symbolic link");
      target.unchanged();
      expect(readdirSync(stateDir)).toEqual([name]);
    });
  }

  it("a dangling state.db link: refused, and nothing is created at its target", () => {
    const target = join(root, "created-by-piw.db");
    symlinkSync(target, join(stateDir, "state.db"));
    refused();
    expect(readdirSync(root).sort()).toEqual(["state"]);
  });

  it("a FIFO in place of state.db: refused at once, not waited on", () => {
    execFileSync("mkfifo", [join(stateDir, "state.db")]);
    expect(refused().message).toContain("is not a regular file");
  });

  it.runIf(process.getuid?.() === 0)("a state.db of another user: refused, left as it was", () => {
    const file = join(stateDir, "state.db");
    writeFileSync(file, "", { mode: 0o644 });
    chownSync(file, OTHER_UID, OTHER_UID);
    expect(refused().message).toContain(`belongs to another user (uid ${OTHER_UID})`);
    expect(statSync(file).mode & 0o777).toBe(0o644);
  });

  it.runIf(process.getuid?.() === 0)("a state directory of another user: refused, left as it was", () => {
    chownSync(stateDir, OTHER_UID, OTHER_UID);
    expect(refused().message).toContain(`${stateDir} (the state directory) belongs to another user`);
    expect(readdirSync(stateDir)).toEqual([]);
  });

  it("the files SQLite creates beside the database are the user's own and 0600", () => {
    const store = RunStore.open({ stateDir });
    try {
      for (const name of readdirSync(stateDir)) {
        expect(statSync(join(stateDir, name)).mode & 0o777, name).toBe(0o600);
      }
      expect(readdirSync(stateDir)).toContain("state.db-wal");
    } finally {
      store.close();
    }
  });
});
