import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { SessionBridge } from "../src/session-bridge.js";
import { fakePi } from "./fake-pi.js";
import { parseAction, runAction } from "../src/workflow-actions.js";
import { HOST_COMMAND, PREFLIGHT_COMMAND, removeTree, sourceWorkerEnv, stopHostProcess } from "@piw/test-kit";

// The real host and worker, from source; only Pi is played by the test, in this process, whose
// environment is the Pi process's.
const SESSION = "session-run-env";
const TOKEN = "from-the-pi-process-e41b";

/** `probe` is only on the Pi process's PATH; it records the token it sees in the run's folder. */
const PROBE_FLOW = `import { defineWorkflow, shell } from "piw";
export default defineWorkflow({
  name: "probe",
  startAt: "look",
  nodes: { look: shell({ exec: ["probe"] }) },
  edges: { look: { to: "done" } },
});
`;

let root: string;
let bridge: SessionBridge | undefined;
const saved = { path: process.env.PATH, token: process.env.PIW_TEST_TOKEN };
beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), "piw-ext-env-"));
  mkdirSync(join(root, "project", ".pi", "workflows"), { recursive: true });
  writeFileSync(join(root, "project", ".pi", "workflows", "probe.workflow.ts"), PROBE_FLOW);
  mkdirSync(join(root, "bin"));
  writeFileSync(join(root, "bin", "probe"), '#!/bin/sh\necho "$PIW_TEST_TOKEN" > seen.txt\n');
  chmodSync(join(root, "bin", "probe"), 0o755);
  Object.assign(process.env, sourceWorkerEnv());
});
afterEach(async () => {
  process.env.PATH = saved.path;
  if (saved.token === undefined) delete process.env.PIW_TEST_TOKEN;
  else process.env.PIW_TEST_TOKEN = saved.token;
  const status = await bridge?.host.call("host.status", {}).catch(() => undefined);
  await bridge?.shutdown();
  bridge = undefined;
  if (status !== undefined) await stopHostProcess(status.pid);
  removeTree(root);
});

describe("a run started from Pi", () => {
  it("runs its commands in the Pi process's environment, not the host's", async () => {
    const { pi, ctx } = fakePi(SESSION);
    bridge = new SessionBridge(pi, { hostCommand: HOST_COMMAND, stateDir: join(root, "state") });
    bridge.remember(ctx);
    // The host starts first, from an environment without the token or the probe.
    await bridge.host.call("host.status", {});
    process.env.PIW_TEST_TOKEN = TOKEN;
    process.env.PATH = `${join(root, "bin")}${delimiter}${saved.path ?? ""}`;
    const project = join(root, "project");
    const started = await runAction(
      bridge,
      parseAction({ action: "start", workflow: "probe" }),
      project,
      { command: PREFLIGHT_COMMAND, env: process.env },
      "model",
    );
    const runId = String(started.details.runId);
    await bridge.host.call("session.settled", { sessionId: SESSION });
    const seen = join(project, "seen.txt");
    for (let i = 0; i < 300 && !existsSync(seen); i += 1) await new Promise((r) => setTimeout(r, 100));
    expect(readFileSync(seen, "utf8").trim()).toBe(TOKEN);
    const view = await bridge.host.call("runs.get", { runId });
    expect(JSON.stringify(view)).not.toContain(TOKEN);
  }, 60_000);
});
