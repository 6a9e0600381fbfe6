import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { findAppEntry, HOST_ENTRY, PREFLIGHT_ENTRY } from "../src/index.js";
import { removeTree } from "@piw/test-kit";

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "piw-app-entry-"));
});
afterEach(() => removeTree(dir));

/** A caller file in `<dir>/caller/dist/`, whose app dependency lives in `<dir>/app` when `app` is set. */
function caller(app: boolean) {
  mkdirSync(join(dir, "caller", "dist"), { recursive: true });
  const url = pathToFileURL(join(dir, "caller", "dist", "main.js")).href;
  const resolve = (specifier: string) => {
    if (!app) throw new Error(`Cannot find package '${specifier}'`);
    return pathToFileURL(join(dir, "app", "package.json")).href;
  };
  return { url, resolve };
}

describe("findAppEntry", () => {
  it("takes the bundled sibling of the caller first", () => {
    const from = caller(true);
    writeFileSync(join(dir, "caller", "dist", "piw-host.js"), "");
    expect(findAppEntry(HOST_ENTRY, from)).toEqual({
      kind: "found",
      path: join(dir, "caller", "dist", "piw-host.js"),
    });
  });

  it("else the workspace app's built file, and says when it is not built", () => {
    const from = caller(true);
    mkdirSync(join(dir, "app", "dist"), { recursive: true });
    expect(findAppEntry(PREFLIGHT_ENTRY, from)).toEqual({
      kind: "not_built",
      path: join(dir, "app", "dist", "preflight.js"),
    });
    writeFileSync(join(dir, "app", "dist", "preflight.js"), "");
    expect(findAppEntry(PREFLIGHT_ENTRY, from)).toEqual({
      kind: "found",
      path: join(dir, "app", "dist", "preflight.js"),
    });
  });

  it("names the app when there is neither", () => {
    expect(findAppEntry(HOST_ENTRY, caller(false))).toEqual({ kind: "app_missing", app: "@piw/app-host" });
  });
});
