import type { RunSummary } from "@piw/protocol";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cleanUp, example, makeHome, piw, piwAtTerminal, runIdIn } from "./cli-harness.js";

// The real CLI, host and worker, from source. A person's answer needs a person's terminal: Pi's bash
// tool starts commands in a new session (setsid), which has no controlling terminal.
const SLOW = 120_000;

describe("piw answer runs only with a controlling terminal", () => {
  let home: string;
  beforeAll(() => {
    home = makeHome();
  });
  afterAll(() => cleanUp(home));

  const approvalRuns = async () =>
    (JSON.parse((await piw(home, ["list", "--json"])).stdout) as { runs: RunSummary[] }).runs.filter(
      (run) => run.workflowName === "approval",
    );

  it(
    "refuses without one and sends nothing, then answers the same checkpoint from a terminal",
    async () => {
      const waiting = await piw(home, ["run", example("approval"), "--input-json", '{"change":"bump zod"}']);
      expect(waiting.code).toBe(3);
      const runId = runIdIn(waiting.stdout);

      // As an agent's shell runs it: detached, in its own session without a terminal.
      const refused = await piw(home, ["answer", runId, '{"approved": true}'], { detached: true });
      expect(refused.code).toBe(64);
      expect(refused.stdout).toBe("");
      expect(refused.stderr).toBe(
        "piw: piw answer needs a terminal: a person answers a checkpoint from a terminal, /workflow answer in Pi, " +
          "or Pi's gate dialog; run without a terminal (an agent's shell has none), nothing was sent\n",
      );
      // Still waiting at the same checkpoint, and no continuation was made.
      const status = JSON.parse((await piw(home, ["status", runId, "--json"])).stdout);
      expect(status.outcome).toBe("waiting");
      expect(status.checkpoint.path).toBe("approve");
      expect((await approvalRuns()).map((run) => run.runId)).toEqual([runId]);

      const answered = await piwAtTerminal(home, ["answer", runId, '{"approved": true}']);
      expect(answered.stderr).toBe("");
      expect(answered.code).toBe(0);
      expect(answered.stdout).toContain(`continuing ${runId} as run`);
      expect(answered.stdout).toMatch(/^✓ approval completed/m);
      const runs = await approvalRuns();
      expect(runs).toHaveLength(2);
      expect(runs.find((run) => run.runId !== runId)?.parentRunId).toBe(runId);
    },
    SLOW,
  );
});
