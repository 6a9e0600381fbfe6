import { existsSync, mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { SessionBridge } from "../src/session-bridge.js";
import { fakePi } from "./fake-pi.js";
import { parseAction, runAction } from "../src/workflow-actions.js";
import { HOST_COMMAND, PREFLIGHT_COMMAND, removeTree, sourceWorkerEnv, stopHostProcess } from "@piw/test-kit";

// The real host and worker, from source; only Pi is played by the test. The first host SIGKILLs
// itself after committing the start and before replying (its test hook), as a host crash would.
const SESSION = "session-lost-reply";

const GREET = `import { compute, defineWorkflow } from "piw";
export default defineWorkflow({
  name: "greet",
  startAt: "hello",
  nodes: { hello: compute({ run: () => "hi" }) },
  edges: { hello: { to: "done" } },
});
`;

let root: string;
let bridge: SessionBridge | undefined;
beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), "piw-ext-lost-reply-"));
  mkdirSync(join(root, "project", ".pi", "workflows"), { recursive: true });
  writeFileSync(join(root, "project", ".pi", "workflows", "greet.workflow.ts"), GREET);
  // Every host the bridge starts inherits this; the once-file lets only the first one die.
  Object.assign(process.env, sourceWorkerEnv());
  process.env.PIW_HOST_CRASH_AT = "after-create";
  process.env.PIW_HOST_CRASH_ONCE_FILE = join(root, "host-crashed");
});
afterEach(async () => {
  delete process.env.PIW_HOST_CRASH_AT;
  delete process.env.PIW_HOST_CRASH_ONCE_FILE;
  const status = await bridge?.host.call("host.status", {}).catch(() => undefined);
  await bridge?.shutdown();
  bridge = undefined;
  if (status !== undefined) await stopHostProcess(status.pid);
  removeTree(root);
});

describe("a workflow start from Pi whose reply was lost with the host", () => {
  it("answers with the one run the host saved, not an error the model would retry", async () => {
    const { pi, ctx } = fakePi(SESSION);
    bridge = new SessionBridge(pi, { hostCommand: HOST_COMMAND, stateDir: join(root, "state") });
    bridge.remember(ctx);
    const project = join(root, "project");
    const started = await runAction(
      bridge,
      parseAction({ action: "start", workflow: "greet" }),
      project,
      { command: PREFLIGHT_COMMAND, env: process.env },
      "model",
    );
    expect(existsSync(join(root, "host-crashed"))).toBe(true);
    const runs = await bridge.host.call("runs.list", { sessionId: SESSION });
    expect(runs).toHaveLength(1);
    expect(started.details).toEqual({
      action: "start",
      workflow: "greet",
      runId: runs[0]?.runId,
      queued: true,
    });
    expect(started.text).toContain(`queued (run ${runs[0]?.runId})`);
  }, 60_000);
});
