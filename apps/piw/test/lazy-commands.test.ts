import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { removeTree } from "@piw/test-kit";
import { APPS, recordLoads } from "./built-bins.js";

const PIW = "piw/dist/main.js";
const BINS = [PIW, "pi-package/dist/piw.js"];
const scratch = mkdtempSync(join(tmpdir(), "piw-lazy-"));
afterAll(() => {
  // `piw run` started a host in the scratch state directory.
  spawnSync(process.execPath, [join(APPS, PIW), "host", "stop"], {
    env: { ...process.env, PIW_HOME: join(scratch, "state") },
  });
  removeTree(scratch);
});

/** The modules `piw <args>` loads (from the built bin), with no host: `--help` stops before one. */
function modulesLoaded(bin: string, args: string[]): string[] {
  const file = join(APPS, bin);
  if (!existsSync(file)) throw new Error(`${file} is missing: run pnpm build first`);
  const log = join(scratch, `${bin}-${args.join("-")}.log`.replace(/[^\w.-]+/g, "-"));
  const result = spawnSync(process.execPath, ["--import", recordLoads(log), file, ...args], {
    encoding: "utf8",
    env: { ...process.env, PIW_HOME: join(scratch, "state") },
  });
  expect(result.status, result.stderr).toBe(0);
  return readFileSync(log, "utf8").trim().split("\n");
}

const TUI = /@earendil-works\/pi-tui|[/-]view-[A-Z0-9]+\.js$/;

describe("each piw command loads only its own modules", () => {
  it.each(BINS)("%s: list and status load neither the viewer app nor Pi's TUI library", (bin) => {
    for (const command of ["list", "status"]) {
      const loaded = modulesLoaded(bin, [command, "--help"]);
      // The command's own chunk did load: the hook sees the bundle's files.
      expect(
        loaded.some((url) => url.includes(`/${command}-`)),
        command,
      ).toBe(true);
      expect(
        loaded.filter((url) => TUI.test(url)),
        command,
      ).toEqual([]);
    }
  });

  it("piw run loads neither the TUI, the markdown parser nor the engine's workflow loader", () => {
    const hello = join(APPS, "..", "examples", "hello.workflow.ts");
    const loaded = modulesLoaded(PIW, ["run", hello, "world"]);
    expect(loaded.some((url) => /\/run-[A-Z0-9]+\.js$/.test(url))).toBe(true);
    // Its follow lines of a run without agent steps measure no text: pi-tui's utilities stay unloaded.
    expect(loaded.filter((url) => TUI.test(url))).toEqual([]);
    expect(loaded.filter((url) => url.includes("/marked"))).toEqual([]);
    // Workflow code runs only in the preflight child: no file of this process holds the engine's loader.
    const own = loaded.filter((url) => url.startsWith("file:") && url.includes("/apps/piw/dist/"));
    const withLoader = own.filter((url) =>
      readFileSync(new URL(url), "utf8").includes("function importWorkflowModule("),
    );
    expect(withLoader).toEqual([]);
  }, 60_000);

  it.each(BINS)("%s: the viewer does load them (the check above can see them)", (bin) => {
    const loaded = modulesLoaded(bin, ["view", "--help"]);
    expect(loaded.some((url) => url.includes("@earendil-works/pi-tui"))).toBe(true);
  });
});
