import { execFile } from "node:child_process";
import { cpSync, existsSync, mkdtempSync, readFileSync, realpathSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type HerdrStandIn, installHerdrStandIn, PI_PACKAGE } from "@piw/test-kit";

/**
 * `piw herdr sync` of the built package, against the stand-in `herdr`. The package is copied to a
 * folder of its own (its node_modules linked), as npm would put it; a second copy plays the same
 * package after an update moved it.
 */

const run = promisify(execFile);
const VERSION = (JSON.parse(readFileSync(join(PI_PACKAGE, "package.json"), "utf8")) as { version: string })
  .version;

let root: string;
beforeAll(() => {
  if (!existsSync(join(PI_PACKAGE, "dist", "piw.js")) || !existsSync(join(PI_PACKAGE, "herdr-plugin.toml"))) {
    throw new Error("the piw package is not built: run pnpm build first");
  }
  root = mkdtempSync(join(tmpdir(), "piw-e2e-herdr-sync-"));
});
afterAll(() => {
  if (root !== undefined) rmSync(root, { recursive: true, force: true });
});

/** A copy of the built package at `root/<name>`; returns its real path. */
function placePackage(name: string): string {
  const at = join(root, name);
  for (const entry of ["package.json", "herdr-plugin.toml", "dist"]) {
    cpSync(join(PI_PACKAGE, entry), join(at, entry), { recursive: true });
  }
  symlinkSync(join(PI_PACKAGE, "node_modules"), join(at, "node_modules"));
  return realpathSync(at);
}

async function sync(
  at: string,
  herdr: HerdrStandIn | { env: Record<string, string> },
  json = false,
): Promise<{ code: number; stdout: string; stderr: string }> {
  const env = { HOME: root, PIW_HOME: join(root, "state"), ...herdr.env };
  return run(process.execPath, [join(at, "dist", "piw.js"), "herdr", "sync", ...(json ? ["--json"] : [])], {
    env,
    cwd: root,
  }).then(
    ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
    (error: { code?: number; stdout?: string; stderr?: string }) => ({
      code: error.code ?? -1,
      stdout: error.stdout ?? "",
      stderr: error.stderr ?? "",
    }),
  );
}

const linkCalls = (herdr: HerdrStandIn) =>
  herdr
    .calls()
    .filter(([group, verb]) => group === "plugin" && ["link", "unlink", "enable"].includes(verb ?? ""));

describe("piw herdr sync", () => {
  it("links and enables the plugin at this package, then has nothing to do", async () => {
    const herdr = installHerdrStandIn(join(root, "herdr-link"));
    const at = placePackage("link");
    const first = await sync(at, herdr);
    expect(first.code, first.stderr).toBe(0);
    expect(first.stdout.trim()).toBe(`linked the Herdr plugin piw at ${at} (version ${VERSION}), enabled`);
    expect(herdr.state().plugins).toEqual([
      expect.objectContaining({ plugin_id: "piw", plugin_root: at, version: VERSION, enabled: true }),
    ]);
    expect(linkCalls(herdr)).toEqual([["plugin", "link", at]]);

    const again = await sync(at, herdr);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout.trim()).toBe(
      `the Herdr plugin piw is linked at ${at} (version ${VERSION}) and enabled; nothing to do`,
    );
    expect(linkCalls(herdr)).toHaveLength(1);
  });

  it("relinks the plugin after the package moved, and says so as JSON", async () => {
    const herdr = installHerdrStandIn(join(root, "herdr-move"));
    const before = placePackage("before-update");
    expect((await sync(before, herdr)).code).toBe(0);
    const after = placePackage("after-update");
    const moved = await sync(after, herdr, true);
    expect(moved.code, moved.stderr).toBe(0);
    expect(JSON.parse(moved.stdout)).toEqual({
      schema: "piw.herdr-sync.v1",
      action: "relinked",
      pluginId: "piw",
      version: VERSION,
      root: after,
      previousRoot: before,
      enabled: true,
    });
    expect(herdr.state().plugins).toEqual([
      expect.objectContaining({ plugin_id: "piw", plugin_root: after, enabled: true }),
    ]);
    expect(linkCalls(herdr).slice(1)).toEqual([
      ["plugin", "unlink", "piw"],
      ["plugin", "link", after],
    ]);
  });

  it("enables a plugin that is linked here but disabled", async () => {
    const herdr = installHerdrStandIn(join(root, "herdr-disabled"));
    const at = placePackage("disabled");
    await run("herdr", ["plugin", "link", at, "--disabled"], { env: { ...process.env, ...herdr.env } });
    const result = await sync(at, herdr, true);
    expect(result.code, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ action: "enabled", root: at, previousRoot: null });
    expect(herdr.state().plugins[0]?.enabled).toBe(true);
  });

  it("without herdr on PATH, says what it needs and exits 1", async () => {
    const at = placePackage("no-herdr");
    const result = await sync(at, { env: { PATH: dirname(process.execPath) } }, true);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain("herdr was not found on PATH");
    expect(result.stderr).toMatch(/install Herdr 0\.7\.0 or newer/);
    expect(JSON.parse(result.stdout)).toMatchObject({ schema: "piw.error.v1", exitCode: 1 });
  });
});
