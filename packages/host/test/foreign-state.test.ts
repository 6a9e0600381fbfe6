import { spawnSync } from "node:child_process";
import {
  chownSync,
  lchownSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type RunningHost, StateDirRefused } from "../src/index.js";
import {
  HOST_MAIN,
  OTHER_UID,
  REPO,
  type Sandbox,
  sandbox,
  start,
  TSX_ENV,
  TSX_LOADER,
  WORKER_COMMAND,
} from "./host-fixture.js";

// State another user (or a link) put where the host keeps its own: every case is refused with a
// message that says what and where, and nothing outside the state directory changes.

const asRoot = process.getuid?.() === 0;
let box: Sandbox;
let host: RunningHost | undefined;
beforeEach(() => {
  box = sandbox();
  mkdirSync(box.stateDir, { mode: 0o700 });
});
afterEach(async () => {
  await host?.stop();
  host = undefined;
  box.cleanup();
});

async function refusal(): Promise<StateDirRefused> {
  const outcome = await start(box).then(
    (started) => {
      host = started;
      return new Error("the host started");
    },
    (error: unknown) => error,
  );
  expect(outcome).toBeInstanceOf(StateDirRefused);
  return outcome as StateDirRefused;
}

/** A file outside the state directory that a planted link points at; it must stay as it was. */
function outsideFile(text: string): { path: string; unchanged(): void } {
  const path = join(box.dir, "precious.txt");
  writeFileSync(path, text, { mode: 0o644 });
  return {
    path,
    unchanged() {
      expect(readFileSync(path, "utf8")).toBe(text);
      expect(statSync(path).mode & 0o777).toBe(0o644);
    },
  };
}

describe("state another user or a link put in the state directory", () => {
  it.runIf(asRoot)("refuses a host.lock that belongs to another user, instead of waiting on it", async () => {
    // Before: pid 1 is alive, so the host said "already running" and exited 0, and nothing served.
    const lock = join(box.stateDir, "host.lock");
    writeFileSync(lock, "1 -\n", { mode: 0o600 });
    chownSync(lock, OTHER_UID, OTHER_UID);
    const refused = await refusal();
    expect(refused.refusal).toBe("not_owned");
    expect(refused.message).toContain(lock);
    expect(refused.message).toContain(`belongs to another user (uid ${OTHER_UID})`);
    expect(readFileSync(lock, "utf8")).toBe("1 -\n");
  });

  it("refuses a host.lock that is a symbolic link", async () => {
    const target = outsideFile("1 -\n");
    symlinkSync(target.path, join(box.stateDir, "host.lock"));
    expect((await refusal()).refusal).toBe("symlink");
    target.unchanged();
  });

  it("refuses a state.db that is a symbolic link, leaving its target alone", async () => {
    // Before: the target was chmodded to 0600 and then written as a SQLite database.
    const target = outsideFile("not yours\n");
    symlinkSync(target.path, join(box.stateDir, "state.db"));
    const error = await start(box).catch((e: unknown) => e);
    expect(error).toMatchObject({ name: "StoreError", code: "insecure_path" });
    expect((error as Error).message).toContain("symbolic link");
    target.unchanged();
    // The lock of the host that refused is gone again.
    expect(readdirSync(box.stateDir).sort()).toEqual(["state.db"]);
  });

  it.runIf(asRoot)("refuses a state directory that is a link another user made", async () => {
    const real = join(box.dir, "elsewhere");
    mkdirSync(real, { mode: 0o700 });
    const link = join(box.dir, "linked-state");
    symlinkSync(real, link);
    lchownSync(link, OTHER_UID, OTHER_UID);
    const outcome = await start({ ...box, stateDir: link }).catch((e: unknown) => e);
    expect(outcome).toBeInstanceOf(StateDirRefused);
    expect((outcome as StateDirRefused).message).toContain(
      `${link} (a symbolic link to the state directory)`,
    );
    expect(readdirSync(real)).toEqual([]);
  });

  it("follows a state directory link of the user's own", async () => {
    const link = join(box.dir, "my-link");
    symlinkSync(box.stateDir, link);
    host = await start({ ...box, stateDir: link });
    expect(readdirSync(box.stateDir)).toContain("state.db");
  });

  it("piw-host prints why it refused and exits 1", () => {
    symlinkSync(outsideFile("x").path, join(box.stateDir, "host.lock"));
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
    expect(result.status).toBe(1);
    expect(result.stderr).toContain(
      `piw-host: ${join(box.stateDir, "host.lock")} (the host lock) is a symbolic link`,
    );
  });
});
