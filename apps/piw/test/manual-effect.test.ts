import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { RunView } from "@piw/protocol";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { removeTree } from "@piw/test-kit";
import { cleanUp, makeHome, piw, runIdIn } from "./cli-harness.js";

// A manual effect whose worker is killed after the side effect ran but before it was settled.
const INVOICE = `import { appendFileSync } from "node:fs";
import { action, defineWorkflow } from "piw";
import { z } from "zod";

export default defineWorkflow({
  name: "invoice",
  input: z.object({ log: z.string() }),
  startAt: "send",
  nodes: {
    send: action({
      run: ({ input, effects }) =>
        effects.manual("invoice.send", { customer: 7 }, () => {
          appendFileSync((input as { log: string }).log, "sent\\n");
          return { invoiceId: "INV-1" };
        }),
    }),
    // Records what the run carried on with: the effect's value, from the action or from a person.
    report: action({
      run: ({ input, outputs, effects }) =>
        effects.idempotent("report.write", { line: 1 }, () => {
          const { invoiceId } = outputs.send as { invoiceId: string };
          appendFileSync((input as { log: string }).log, \`report \${invoiceId}\\n\`);
          return invoiceId;
        }),
    }),
  },
  edges: { send: { to: "report" }, report: { to: "done" } },
});
`;

let home: string;
let project: string;
beforeEach(() => {
  home = makeHome();
  project = mkdtempSync(join(tmpdir(), "piw-manual-"));
  mkdirSync(join(project, ".pi", "workflows"), { recursive: true });
  writeFileSync(join(project, ".pi", "workflows", "invoice.workflow.ts"), INVOICE);
});
afterEach(async () => {
  await cleanUp(home);
  removeTree(project);
});

const lines = (log: string) => readFileSync(log, "utf8").split("\n").filter(Boolean);
const sent = (log: string) => lines(log).filter((line) => line === "sent").length;

describe("a run parked at a manual effect that a crash left unsettled", () => {
  it.each([
    ["--happened", ["--happened", '{"invoiceId":"INV-9"}'], 1, "report INV-9"],
    ["--not-happened", ["--not-happened"], 2, "report INV-1"],
  ] as const)(
    "needs a person's word to resume: %s",
    async (_name, flags, sends, report) => {
      const log = join(project, "sent.log");
      // The host (auto-started by this first command) passes the crash hook to its workers: the
      // first worker dies after the effect ran, the relaunch finds it unsettled and parks the run.
      const env = {
        PIW_WORKER_CRASH_AT: "after-effect",
        PIW_WORKER_CRASH_ONCE_FILE: join(project, "crashed-once"),
      };
      const first = await piw(home, ["run", "invoice", "--input-json", JSON.stringify({ log })], {
        cwd: project,
        env,
      });
      expect(first.code, first.stderr).toBe(5);
      const runId = runIdIn(first.stdout);
      expect(sent(log)).toBe(1);

      const bare = await piw(home, ["resume", runId], { cwd: project });
      expect(bare.code).toBe(64);
      expect(bare.stderr).toContain("was started but never settled");
      expect(bare.stderr).toContain(`piw resume ${runId} --happened`);
      const still = JSON.parse((await piw(home, ["status", runId, "--json"])).stdout) as RunView;
      expect(still.recoveryReason?.code).toBe("manual_effect_unsettled");

      const resumed = await piw(home, ["resume", runId, ...flags], { cwd: project });
      expect(resumed.code, resumed.stderr).toBe(0);
      expect(resumed.stdout).toContain("settled manual effect");
      expect(sent(log)).toBe(sends);
      const done = JSON.parse((await piw(home, ["status", runId, "--json"])).stdout) as RunView;
      expect(done.status).toBe("done");
      expect(done.outcome).toBe("completed");
      // The run went on with the effect's value: the person's, or the one the action returned.
      expect(lines(log).at(-1)).toBe(report);
    },
    120_000,
  );
});
