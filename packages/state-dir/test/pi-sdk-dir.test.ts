import { chmodSync, mkdirSync, mkdtempSync, realpathSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { checkPiSdkDir, findPiSdkDir, PI_SDK_PACKAGE } from "../src/index.js";
import { removeTree } from "@piw/test-kit";

let root: string;
beforeEach(() => {
  root = realpathSync(mkdtempSync(join(tmpdir(), "piw-pi-sdk-")));
});
afterEach(() => removeTree(root));

/** A package folder as npm lays out Pi's SDK: package.json, dist/index.js and the CLI beside it. */
function writeSdk(dir: string, manifest: Record<string, unknown> = {}): string {
  mkdirSync(join(dir, "dist"), { recursive: true });
  writeFileSync(
    join(dir, "package.json"),
    JSON.stringify({
      name: PI_SDK_PACKAGE,
      version: "1.6.0",
      exports: { ".": { import: "./dist/index.js" } },
      ...manifest,
    }),
  );
  writeFileSync(join(dir, "dist", "index.js"), "export const VERSION = '1.6.0';\n");
  writeFileSync(join(dir, "dist", "cli.js"), "#!/usr/bin/env node\n");
  return dir;
}

describe("checkPiSdkDir", () => {
  it("takes a real folder of this user holding the SDK's package.json, and names its entry file", () => {
    const dir = writeSdk(join(root, "node_modules", "@earendil-works", "pi-coding-agent"));
    expect(checkPiSdkDir(dir)).toEqual({ ok: true, dir, entry: join(dir, "dist", "index.js") });
  });

  it("refuses everything else with a reason and no contents", () => {
    const sdk = writeSdk(join(root, "sdk"));
    expect(checkPiSdkDir("relative/sdk")).toEqual({ ok: false, refusal: "not_absolute" });
    expect(checkPiSdkDir(join(root, "nothing"))).toEqual({ ok: false, refusal: "missing" });
    expect(checkPiSdkDir(join(sdk, "package.json"))).toEqual({ ok: false, refusal: "not_directory" });

    symlinkSync(sdk, join(root, "link"));
    expect(checkPiSdkDir(join(root, "link"))).toEqual({ ok: false, refusal: "symlink" });
    // A link on the way to the folder counts too.
    symlinkSync(root, join(root, "up"));
    expect(checkPiSdkDir(join(root, "up", "sdk"))).toEqual({ ok: false, refusal: "symlink" });

    const other = writeSdk(join(root, "other"), { name: "not-pi" });
    expect(checkPiSdkDir(other)).toEqual({ ok: false, refusal: "not_pi_sdk" });
    const escapes = writeSdk(join(root, "escapes"), { exports: { ".": { import: "../sdk/dist/index.js" } } });
    expect(checkPiSdkDir(escapes)).toEqual({ ok: false, refusal: "not_pi_sdk" });
    const noEntry = writeSdk(join(root, "no-entry"), { exports: { ".": { import: "./dist/gone.js" } } });
    expect(checkPiSdkDir(noEntry)).toEqual({ ok: false, refusal: "not_pi_sdk" });
    const empty = join(root, "empty");
    mkdirSync(empty);
    expect(checkPiSdkDir(empty)).toEqual({ ok: false, refusal: "not_pi_sdk" });

    chmodSync(sdk, 0o777);
    expect(checkPiSdkDir(sdk)).toEqual({ ok: false, refusal: "open_to_others" });
    chmodSync(sdk, 0o755);
    chmodSync(join(sdk, "dist", "index.js"), 0o666);
    expect(checkPiSdkDir(sdk)).toEqual({ ok: false, refusal: "open_to_others" });
  });
});

describe("findPiSdkDir", () => {
  it("walks up from the file Pi was started from, through a bin link, to the SDK's folder", () => {
    const dir = writeSdk(join(root, "lib", "node_modules", "@earendil-works", "pi-coding-agent"));
    mkdirSync(join(root, "bin"));
    symlinkSync(join(dir, "dist", "cli.js"), join(root, "bin", "pi"));
    expect(findPiSdkDir(join(root, "bin", "pi"))).toBe(dir);
    expect(findPiSdkDir(join(dir, "dist", "cli.js"))).toBe(dir);
  });

  it("finds nothing when Pi was not started from inside the SDK's package", () => {
    writeFileSync(join(root, "pi"), "");
    expect(findPiSdkDir(join(root, "pi"))).toBeNull();
    expect(findPiSdkDir(join(root, "gone"))).toBeNull();
    expect(findPiSdkDir("relative")).toBeNull();
    expect(findPiSdkDir(undefined)).toBeNull();
  });
});
