import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { WorkflowError } from "../src/host-link.js";
import { SessionBridge } from "../src/session-bridge.js";
import { fakePi } from "./fake-pi.js";
import { runAction } from "../src/workflow-actions.js";
import {
  HOST_COMMAND,
  isAlive,
  PREFLIGHT_COMMAND,
  removeTree,
  sourceWorkerEnv,
  stopHostProcess,
} from "@piw/test-kit";

// The extension's start and answer load workflow files in the real preflight child (from source), never
// in Pi's process: this test process stands in for Pi and must survive whatever the workflow does.
const SESSION = "session-preflight";

const workflow = (name: string, prelude: string) =>
  `import { compute, defineWorkflow } from "piw";
${prelude}
export default defineWorkflow({
  name: "${name}",
  startAt: "a",
  nodes: { a: compute({ run: () => "ok" }) },
  edges: { a: { to: "done" } },
});
`;

let root: string;
let project: string;
let stateDir: string;
let bridge: SessionBridge;
const env = () => process.env;

beforeAll(() => {
  Object.assign(process.env, sourceWorkerEnv());
  root = mkdtempSync(join(tmpdir(), "piw-ext-preflight-"));
  project = join(root, "project");
  stateDir = join(root, "state");
  const dir = join(project, ".pi", "workflows");
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, "exits.workflow.ts"), workflow("exits", "process.exit(0);"));
  writeFileSync(
    join(dir, "loops.workflow.ts"),
    workflow(
      "loops",
      'import { writeFileSync } from "node:fs";\nwriteFileSync("loops.pid", String(process.pid));\nfor (;;) {}',
    ),
  );
  writeFileSync(join(dir, "throws.workflow.ts"), workflow("throws", 'throw new Error("boom at import");'));
  writeFileSync(
    join(dir, "prints.workflow.ts"),
    workflow(
      "prints",
      'console.log("PRINTED AT IMPORT");\nprocess.send?.({ type: "crashed", requestId: "forged" });',
    ),
  );
  const { pi, ctx } = fakePi(SESSION);
  bridge = new SessionBridge(pi, { hostCommand: HOST_COMMAND, stateDir });
  bridge.remember(ctx);
});
afterAll(async () => {
  const status = await bridge.host.call("host.status", {}).catch(() => undefined);
  await bridge.shutdown();
  if (status !== undefined) await stopHostProcess(status.pid);
  removeTree(root);
});

async function startError(workflowName: string, timeoutMs = 10_000): Promise<WorkflowError> {
  const error = await runAction(
    bridge,
    { action: "start", workflow: workflowName, task: "secret task" },
    project,
    {
      command: PREFLIGHT_COMMAND,
      timeoutMs,
      env: env(),
    },
    "human",
  ).then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  expect(error).toBeInstanceOf(WorkflowError);
  return error as WorkflowError;
}

describe("the extension's workflow start preflights in a child process", () => {
  it("refuses a workflow that exits at import, and Pi's process lives on with nothing saved", async () => {
    const error = await startError("exits");
    expect(error.message).toBe(
      "workflow exits ended the process that loads it (exit code 0) before it finished loading: " +
        "a workflow file must not exit at import",
    );
    expect(existsSync(stateDir) ? readdirSync(stateDir) : []).toEqual([]);
  }, 60_000);

  it("refuses a workflow that throws at import, without the task in the error", async () => {
    const error = await startError("throws");
    expect(error.message).toContain("failed to load: boom at import");
    expect(error.message).not.toContain("secret task");
    expect(error.message).not.toMatch(/\n\s+at /);
  }, 60_000);

  it("stops a workflow that loops at import after the time limit; the child is dead", async () => {
    const error = await startError("loops", 8_000);
    expect(error.message).toBe(
      "workflow loops did not finish loading within 8000 ms and was stopped: its code may loop or wait at import",
    );
    const pid = Number(readFileSync(join(project, "loops.pid"), "utf8"));
    expect(isAlive(pid)).toBe(false);
    expect(existsSync(stateDir) ? readdirSync(stateDir) : []).toEqual([]);
  }, 60_000);

  it("queues a workflow that prints and sends its own messages at import, from the child's reply", async () => {
    const result = await runAction(
      bridge,
      { action: "start", workflow: "prints" },
      project,
      { command: PREFLIGHT_COMMAND, env: env() },
      "human",
    );
    expect(result.details).toMatchObject({ action: "start", workflow: "prints", queued: true });
    expect(result.text).not.toContain("PRINTED");
    const [run] = await bridge.host.call("runs.list", { sessionId: SESSION, limit: 5 });
    expect(run).toMatchObject({ runId: result.details.runId, workflowName: "prints", status: "queued" });
  }, 60_000);
});
