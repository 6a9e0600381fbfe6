import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";
import type { RunView } from "@piw/protocol";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hostPidIn, isAlive, removeTree, waitFor } from "@piw/test-kit";
import { cleanUp, makeHome, piw, runIdIn } from "./cli-harness.js";

const SLOW = 180_000;
const CLIENT_TOKEN = "from-the-client-shell-7c1e";

/**
 * `probe` is found only on the starting shell's PATH; it records the token it sees. An action does
 * the same from workflow code (`process.env`) and from a child process it spawns. Then a wait, so a
 * host restart falls inside the run, and the probe again.
 */
const ENV_PROBE = `import { execFileSync } from "node:child_process";
import { appendFileSync } from "node:fs";
import { action, defineWorkflow, shell, wait } from "piw";

export default defineWorkflow({
  name: "envprobe",
  startAt: "before",
  nodes: {
    before: shell({ exec: ["probe", "before"] }),
    fromCode: action({
      run: ({ effects }) =>
        effects.idempotent("probe.record", { from: "action" }, () => {
          appendFileSync("seen.txt", \`action \${process.env.PIW_TEST_TOKEN ?? "unset"}\\n\`);
          execFileSync("probe", ["child"]);
          return { recorded: true };
        }),
    }),
    pause: wait({ ms: 4_000 }),
    after: shell({ exec: { shell: "probe after" }, env: { EXTRA: "added" } }),
  },
  edges: {
    before: { to: "fromCode" },
    fromCode: { to: "pause" },
    pause: { to: "after" },
    after: { to: "done" },
  },
});
`;

const PROBE = `#!/bin/sh
echo "$1 \${PIW_TEST_TOKEN:-unset}\${EXTRA:+ $EXTRA}" >> seen.txt
`;

function seen(project: string): string[] {
  const file = join(project, "seen.txt");
  return existsSync(file) ? readFileSync(file, "utf8").trim().split("\n") : [];
}

describe("a run's commands see the environment of the shell that started it", () => {
  let home: string;
  let project: string;
  let bin: string;
  /** The shell the host is started from: another token, and no probe on its PATH. */
  let hostShell: NodeJS.ProcessEnv;
  /** The shell that starts the run. */
  let clientShell: NodeJS.ProcessEnv;
  beforeAll(() => {
    home = makeHome();
    project = mkdtempSync(join(tmpdir(), "piw-env-project-"));
    mkdirSync(join(project, ".pi", "workflows"), { recursive: true });
    writeFileSync(join(project, ".pi", "workflows", "envprobe.workflow.ts"), ENV_PROBE);
    bin = mkdtempSync(join(tmpdir(), "piw-env-bin-"));
    writeFileSync(join(bin, "probe"), PROBE);
    chmodSync(join(bin, "probe"), 0o755);
    hostShell = { PIW_TEST_TOKEN: "from-the-host-shell" };
    clientShell = { PIW_TEST_TOKEN: CLIENT_TOKEN, PATH: `${bin}${delimiter}${process.env.PATH ?? ""}` };
  });
  afterAll(async () => {
    await cleanUp(home);
    removeTree(project);
    removeTree(bin);
  });

  it(
    "shell nodes, action code and its child processes, across a host restart and in a restart",
    async () => {
      // The host starts from another shell first, as it does when another project's piw came first.
      const list = await piw(home, ["list"], { cwd: project, env: hostShell });
      expect(list.code).toBe(0);
      const firstHost = hostPidIn(home);
      expect(firstHost).toBeDefined();

      const started = await piw(home, ["run", "envprobe", "--detach"], { cwd: project, env: clientShell });
      expect(started.code).toBe(0);
      const runId = runIdIn(started.stdout);
      await waitFor("the first probes", () => seen(project).length === 3);

      // Restart the host (from the host's shell) while the run waits: the environment is durable.
      expect((await piw(home, ["host", "stop"], { cwd: project, env: hostShell })).code).toBe(0);
      await waitFor("the host to stop", () => firstHost === undefined || !isAlive(firstHost));
      // Stopped while the run waited: its last probe runs under the next host.
      expect(seen(project)).toHaveLength(3);
      expect((await piw(home, ["list"], { cwd: project, env: hostShell })).code).toBe(0);
      expect(hostPidIn(home)).not.toBe(firstHost);
      await waitFor("the run to finish", () => seen(project).length === 4, 60_000);
      const done = JSON.parse(
        (await piw(home, ["status", runId, "--json"], { env: hostShell })).stdout,
      ) as RunView;
      expect(done.status).toBe("done");
      expect(seen(project)).toEqual([
        `before ${CLIENT_TOKEN}`,
        `action ${CLIENT_TOKEN}`,
        `child ${CLIENT_TOKEN}`,
        `after ${CLIENT_TOKEN} added`,
      ]);

      // A restart from the host's shell runs in the environment saved with the run it restarts.
      const restart = await piw(home, ["restart", runId], { cwd: project, env: hostShell });
      expect(restart.code).toBe(0);
      expect(seen(project).slice(4)).toEqual([
        `before ${CLIENT_TOKEN}`,
        `action ${CLIENT_TOKEN}`,
        `child ${CLIENT_TOKEN}`,
        `after ${CLIENT_TOKEN} added`,
      ]);

      // Never shown: not in a view, the list or the history.
      for (const args of [
        ["status", runId, "--json"],
        ["list", "--json"],
        ["status", runId],
      ]) {
        const out = await piw(home, args, { cwd: project, env: hostShell });
        expect(out.stdout + out.stderr).not.toContain(CLIENT_TOKEN);
      }
    },
    SLOW,
  );

  it(
    "refuses an environment over the limit with the largest variable's name, never its value",
    async () => {
      // Two variables: the kernel takes at most 128 KiB in one.
      const big = `huge-value-${"v".repeat(100 * 1024)}`;
      const refused = await piw(home, ["run", "envprobe"], {
        cwd: project,
        env: { HUGE_VARIABLE: big, HUGE_OTHER: big },
      });
      expect(refused.code).toBe(64);
      expect(refused.stderr).toContain("HUGE_VARIABLE");
      expect(refused.stderr).toContain("a run saves at most 128 KiB of it");
      expect(refused.stdout + refused.stderr).not.toContain("huge-value-");
    },
    SLOW,
  );
});
