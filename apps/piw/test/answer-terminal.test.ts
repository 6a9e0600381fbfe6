import type { RunSummary } from "@piw/protocol";
import { PIW_ENV } from "@piw/state-dir";

const PIW_UNDER_PI_ENV = PIW_ENV.underPi.name;
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cleanUp, example, makeHome, type PiwOptions, piw, piwAtTerminal, runIdIn } from "./cli-harness.js";

// The real CLI, host and worker, from source. A person's answer needs a person's terminal outside Pi:
// Pi's bash tool starts commands in a new session (setsid), which has no controlling terminal, and a
// command can make itself one (`script`), so what Pi leaves in its children counts too.
const SLOW = 120_000;

const UNDER_PI =
  "piw: piw answer gives a person's answer and refuses to run under Pi (its environment or a parent " +
  "process is Pi), where the model's bash tool could run it too; answer with /workflow answer or Pi's " +
  "gate dialog, or run piw answer in a terminal outside Pi; nothing was sent\n";

describe("piw answer runs only with a controlling terminal, outside Pi", () => {
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
      expect(refused.code).toBe(77);
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

  const underPi: [string, PiwOptions][] = [
    ["piw's mark, which its extension leaves in the Pi process", { env: { [PIW_UNDER_PI_ENV]: "1" } }],
    ["Pi's own variable", { env: { PI_CODING_AGENT: "true" } }],
    // Its own environment without the variables: the parents still show.
    ["a parent process named as Pi names itself", { parentTitle: "pi" }],
    [
      "a parent started with piw's mark, cleared just before piw",
      { env: { [PIW_UNDER_PI_ENV]: "1" }, unsetInTerminal: [PIW_UNDER_PI_ENV] },
    ],
  ];

  it.each(underPi)(
    "refuses under Pi even with a terminal, seen by %s, and sends nothing",
    async (_sign, options) => {
      const waiting = await piw(home, [
        "run",
        example("approval"),
        "--input-json",
        '{"change":"pin vitest"}',
      ]);
      expect(waiting.code).toBe(3);
      const runId = runIdIn(waiting.stdout);
      const before = (await approvalRuns()).length;

      const refused = await piwAtTerminal(home, ["answer", runId, '{"approved": true}'], options);
      expect(refused.code).toBe(77);
      expect(refused.stdout).toBe("");
      expect(refused.stderr).toBe(UNDER_PI);
      const status = JSON.parse((await piw(home, ["status", runId, "--json"])).stdout);
      expect(status.outcome).toBe("waiting");
      expect(status.checkpoint.path).toBe("approve");
      expect(await approvalRuns()).toHaveLength(before);

      // The same terminal under another parent, without Pi's variables, is a person's.
      const answered = await piwAtTerminal(home, ["answer", runId, '{"approved": false}'], {
        parentTitle: "bash",
      });
      expect(answered.stderr).toBe("");
      expect(answered.code).toBe(0);
      expect(answered.stdout).toContain(`continuing ${runId} as run`);
    },
    SLOW,
  );
});
