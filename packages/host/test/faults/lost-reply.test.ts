import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { type RunRecord, runOutcome } from "@piw/protocol";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { isAlive } from "@piw/test-kit";
import { type Sandbox, sandbox, writeWorkflow } from "../host-fixture.js";
import { piw, readState } from "./fault-fixture.js";

// A request that creates a run can be committed by a host that dies before it replies. The `piw`
// client must then find the run it made (the same request key, sent to the next host) instead of
// failing with 69 — after which a user would run it a second time.

const APPROVE = `import { checkpoint, compute, defineWorkflow } from "piw";
import { z } from "zod";
export default defineWorkflow({
  name: "approve",
  input: z.object({}),
  startAt: "plan",
  nodes: {
    plan: compute({ run: () => "the plan" }),
    ask: checkpoint({ prompt: "Approve?", answer: z.object({ ok: z.boolean() }) }),
    apply: compute({ run: ({ outputs }) => ({ plan: outputs.plan, answer: outputs.ask }) }),
  },
  edges: { plan: { to: "ask" }, ask: { to: "apply" }, apply: { to: "done" } },
});
`;

let box: Sandbox;
beforeEach(() => {
  box = sandbox();
});
afterEach(async () => {
  await piw(box, ["host", "stop"]);
  const lock = join(box.stateDir, "host.lock");
  const pid = existsSync(lock) ? Number(readFileSync(lock, "utf8").trim().split(/\s+/)[0]) : 0;
  if (pid > 0 && isAlive(pid)) process.kill(pid, "SIGKILL");
  box.cleanup();
});

/** The host the CLI starts SIGKILLs itself once, after its first run-creating commit and before replying. */
function crashOnce(): { env: Record<string, string>; crashed: () => boolean } {
  const once = join(box.dir, "host-crashed");
  return {
    env: { PIW_HOST_CRASH_AT: "after-create", PIW_HOST_CRASH_ONCE_FILE: once },
    crashed: () => existsSync(once),
  };
}

async function allRuns(): Promise<RunRecord[]> {
  await piw(box, ["host", "stop"]);
  return readState(box, (store) => store.listRuns({ limit: 100 }));
}

/** A run of the approval flow, waiting at its checkpoint, with no host left running. */
async function waitingRun(file: string): Promise<string> {
  const run = await piw(box, ["run", file, "--input-json", "{}"]);
  expect(run.code, run.stderr).toBe(3);
  const [first] = await allRuns();
  if (!first) throw new Error("no run");
  return first.runId;
}

describe("kill -9 of the host after it committed a new run and before it replied", () => {
  it("piw run ends with the one run that was created, not with 69", async () => {
    const flow = await writeWorkflow(box, "approve", APPROVE);
    const crash = crashOnce();
    const run = await piw(box, ["run", flow.file, "--input-json", "{}"], crash.env);
    expect(crash.crashed()).toBe(true);
    expect(run.code, run.stderr).toBe(3);
    const runs = await allRuns();
    expect(runs.map((r) => [r.originCommand, r.status, runOutcome(r)])).toEqual([
      ["start", "done", "waiting"],
    ]);
    expect(run.stdout).toContain(`run ${runs[0]?.runId}`);
  }, 120_000);

  it("piw answer ends with the one continuation that was created", async () => {
    const flow = await writeWorkflow(box, "approve", APPROVE);
    const parent = await waitingRun(flow.file);
    const crash = crashOnce();
    const answer = await piw(box, ["answer", parent, '{"ok":true}'], crash.env, true);
    expect(crash.crashed()).toBe(true);
    expect(answer.code, answer.stderr).toBe(0);
    const children = (await allRuns()).filter((r) => r.parentRunId === parent);
    expect(children.map((r) => [r.originCommand, r.status, runOutcome(r)])).toEqual([
      ["continue", "done", "completed"],
    ]);
    expect(answer.stdout).toContain(`continuing ${parent} as run ${children[0]?.runId}`);
  }, 120_000);

  it("piw restart ends with the one restart that was created", async () => {
    const flow = await writeWorkflow(box, "approve", APPROVE);
    const parent = await waitingRun(flow.file);
    const crash = crashOnce();
    const restart = await piw(box, ["restart", parent], crash.env);
    expect(crash.crashed()).toBe(true);
    expect(restart.code, restart.stderr).toBe(3);
    const children = (await allRuns()).filter((r) => r.parentRunId === parent);
    expect(children.map((r) => [r.originCommand, r.status, runOutcome(r)])).toEqual([
      ["restart", "done", "waiting"],
    ]);
    expect(restart.stdout).toContain(`restarting ${parent} as run ${children[0]?.runId}`);
  }, 120_000);
});
