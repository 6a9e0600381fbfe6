import { execFile } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterEach, describe, expect, it } from "vitest";
import { PI_BIN, PI_PACKAGE, type PiSession, startFakeModel, startPiSession, stopHost } from "@piw/test-kit";

const run = promisify(execFile);

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describe("the piw Pi package", () => {
  it("installs with pi install <path>, and the installed package brings the workflow tool, /workflow and the piw skill", async () => {
    const home = mkdtempSync(join(tmpdir(), "piw-e2e-install-"));
    cleanups.push(() => rmSync(home, { recursive: true, force: true }));
    const agentDir = join(home, "agent");
    mkdirSync(agentDir, { recursive: true });
    const env = {
      ...process.env,
      HOME: home,
      PI_CODING_AGENT_DIR: agentDir,
      PI_OFFLINE: "1",
      PI_TELEMETRY: "0",
      PI_SKIP_VERSION_CHECK: "1",
    };
    await run(PI_BIN, ["install", PI_PACKAGE], { env, timeout: 60_000 });
    const settings = JSON.parse(readFileSync(join(agentDir, "settings.json"), "utf8")) as {
      packages?: unknown[];
    };
    expect(JSON.stringify(settings.packages)).toContain("pi-package");

    // A Pi with that settings entry and no -e loads the package.
    const model = await startFakeModel();
    cleanups.push(() => model.close());
    // The installed extension starts a piw host of its own at session start: stop it after Pi.
    cleanups.push(() => stopHost(join(home, "piw")));
    const pi: PiSession = await startPiSession({
      model,
      settings: { packages: settings.packages },
      env: { PIW_HOME: join(home, "piw") },
    });
    cleanups.push(() => pi.close());
    const commands = (
      await pi.call<{ commands: Array<{ name: string; source?: string }> }>({ type: "get_commands" })
    ).commands;
    const names = commands.map((command) => command.name);
    expect(names).toContain("workflow");
    expect(names.some((name) => name.includes("piw"))).toBe(true);
  }, 120_000);
});
