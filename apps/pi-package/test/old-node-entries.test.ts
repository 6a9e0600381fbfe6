import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

const APPS = join(import.meta.dirname, "..", "..");

/** Every process entry: the checkout's own app builds, and the bundles the published package ships. */
const ENTRIES = [
  ["piw", "piw/dist/main.js"],
  ["piw-host", "host/dist/main.js"],
  ["piw-worker", "worker/dist/main.js"],
  ["piw-preflight", "worker/dist/preflight.js"],
  ["piw", "pi-package/dist/piw.js"],
  ["piw-host", "pi-package/dist/piw-host.js"],
  ["piw-worker", "pi-package/dist/piw-worker.js"],
  ["piw-preflight", "pi-package/dist/piw-preflight.js"],
  // The Herdr plugin's pane program: the viewer, by way of piw's own entry.
  ["piw", "pi-package/dist/herdr-pane.js"],
] as const;

/** A preload that makes the entry see an older Node; the real Node still runs it. */
function asNode(version: string): string {
  return `data:text/javascript,Object.defineProperty(process,'version',{value:'${version}'})`;
}

function runEntry(entry: string, version: string, args: string[] = []) {
  const file = join(APPS, entry);
  if (!existsSync(file)) throw new Error(`${file} is missing: run pnpm build first`);
  return spawnSync(process.execPath, ["--import", asNode(version), file, ...args], {
    encoding: "utf8",
    env: { ...process.env, PIW_HOME: join(APPS, "no-such-state-dir") },
    timeout: 20_000,
  });
}

describe("every entry checks the Node version before it loads anything else", () => {
  it.each(ENTRIES)("%s (%s) refuses Node 22.18 with exit 78 and one line", (name, entry) => {
    const result = runEntry(entry, "v22.18.0");
    expect(result.status, result.stderr).toBe(78);
    expect(result.stdout).toBe("");
    const lines = result.stderr.trimEnd().split("\n");
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(new RegExp(`^${name}: needs Node 22\\.19 or newer; this is Node v22\\.18\\.0 `));
  });

  it("lets Node 22.19 through: the same preload with a new enough version runs piw --version", () => {
    for (const entry of ["piw/dist/main.js", "pi-package/dist/piw.js"]) {
      const result = runEntry(entry, "v22.19.0", ["--version"]);
      expect(result.status, result.stderr).toBe(0);
      expect(result.stdout.trim()).toMatch(/^\d+\.\d+\.\d+/);
    }
  });
});
