import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { commitChanges, type ManagedEffects } from "../src/index.js";

let repo: string;
const git = (...args: string[]) => execFileSync("git", args, { cwd: repo, encoding: "utf8" }).trim();

/** Effects whose result is never saved: every call runs the effect again, as after a crash before it settled. */
const unsaved: ManagedEffects & { requests: unknown[] } = {
  requests: [],
  idempotent: async (_type, request, fn) => {
    unsaved.requests.push(request);
    return fn(request);
  },
  manual: async (_type, request, fn) => fn(request),
};

beforeAll(() => {
  repo = mkdtempSync(join(tmpdir(), "piw-git-commit-"));
  git("init", "-q", "-b", "main");
  git("config", "user.email", "dev@example.com");
  git("config", "user.name", "Dev");
  writeFileSync(join(repo, "a.txt"), "one\n");
  git("add", ".");
  git("commit", "-qm", "start");
});
afterAll(() => rmSync(repo, { recursive: true, force: true }));

describe("commitChanges", () => {
  it("commits every change, new files included, and says which", async () => {
    writeFileSync(join(repo, "a.txt"), "two\n");
    writeFileSync(join(repo, "b.txt"), "new\n");
    const done = await commitChanges(unsaved, { path: repo, message: "Change a, add b\n\nWhy." });
    expect(done).toMatchObject({ branch: "main", adopted: false, files: ["a.txt", "b.txt"] });
    expect(done.commit).toBe(git("rev-parse", "HEAD"));
    expect(git("log", "-1", "--format=%s")).toBe("Change a, add b");
    expect(git("status", "--porcelain")).toBe("");
    expect(unsaved.requests.at(-1)).toEqual({
      root: done.root,
      branch: "main",
      message: "Change a, add b\n\nWhy.",
    });
  });

  it("adopts its own commit when the effect runs again after a crash, instead of committing twice", async () => {
    writeFileSync(join(repo, "c.txt"), "c\n");
    const first = await commitChanges(unsaved, { path: repo, message: "Add c" });
    const count = git("rev-list", "--count", "HEAD");
    const again = await commitChanges(unsaved, { path: repo, message: "Add c" });
    expect(again).toEqual({ ...first, adopted: true });
    expect(git("rev-list", "--count", "HEAD")).toBe(count);
  });

  it("returns no commit when there is nothing to commit", async () => {
    const nothing = await commitChanges(unsaved, { path: repo, message: "Nothing" });
    expect(nothing).toMatchObject({ commit: null, files: [], adopted: false });
  });

  it("fails with our own words when git refuses, never git's", async () => {
    writeFileSync(join(repo, ".git", "hooks", "pre-commit"), "#!/bin/sh\necho secret-path >&2\nexit 1\n", {
      mode: 0o755,
    });
    writeFileSync(join(repo, "d.txt"), "d\n");
    await expect(commitChanges(unsaved, { path: repo, message: "Add d" })).rejects.toThrow(
      /^git refused the commit \(a hook failed, or git has no user name and email\)\.$/,
    );
    rmSync(join(repo, ".git", "hooks", "pre-commit"));
  });
});
