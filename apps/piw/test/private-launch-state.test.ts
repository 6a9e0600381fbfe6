import { existsSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { RunView } from "@piw/protocol";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { removeTree } from "@piw/test-kit";
import { cleanUp, makeHome, piw, runIdIn } from "./cli-harness.js";

const SLOW = 120_000;
const TOKEN = "tok-CLI-SECRET-51d2";

/**
 * Its top level removes its own file: preflight (which evaluates it) still prepares the run, and the
 * worker then finds no file, so the launch fails before any node runs.
 */
const VANISHING = `import { unlinkSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { compute, defineWorkflow } from "piw";
import { z } from "zod";

unlinkSync(fileURLToPath(import.meta.url));

export default defineWorkflow({
  name: "vanishing",
  input: z.object({ task: z.string() }),
  startAt: "work",
  nodes: { work: compute({ run: () => "never" }) },
  edges: { work: { to: "done" } },
});
`;

describe("a launch that fails before it ran, through piw", () => {
  let home: string;
  let project: string;
  beforeAll(() => {
    home = makeHome();
    project = mkdtempSync(join(tmpdir(), "piw-vanishing-"));
  });
  afterAll(async () => {
    await cleanUp(home);
    removeTree(project);
  });

  it(
    "piw status and --json say the input was cleared and never show it; piw restart says why not",
    async () => {
      const file = join(project, "vanishing.workflow.ts");
      writeFileSync(file, VANISHING);
      const run = await piw(home, ["run", file, `deploy with token ${TOKEN}`], { cwd: project });
      expect(existsSync(file)).toBe(false);
      const runId = runIdIn(run.stdout);
      expect(run.stdout).toContain("workflow_not_found");

      const status = await piw(home, ["status", runId], { cwd: project });
      expect(status.stdout).toMatch(/^input +cleared \(the launch ended before it ran/m);
      const json = await piw(home, ["status", runId, "--json"], { cwd: project });
      const view = JSON.parse(json.stdout) as RunView;
      expect(view).toMatchObject({
        status: "failed",
        input: { kind: "cleared" },
        inputSummary: "(input cleared)",
      });
      const list = await piw(home, ["list"], { cwd: project });
      expect(list.stdout).toContain("(input cleared)");

      const restart = await piw(home, ["restart", runId], { cwd: project });
      expect(restart.code).not.toBe(0);
      expect(restart.stderr).toContain("its input was cleared then; it cannot be restarted");
      for (const out of [run, status, json, list, restart]) {
        expect(out.stdout + out.stderr).not.toContain(TOKEN);
      }
    },
    SLOW,
  );
});
