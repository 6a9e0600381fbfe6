import { randomUUID } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { RunSummary } from "@piw/protocol";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hostPidIn, isAlive, removeTree } from "@piw/test-kit";
import { cleanUp, makeHome, piw, piwAtTerminal, runIdIn } from "./cli-harness.js";

// The real CLI, preflight child, host and worker, from source. Workflow code must never run inside
// `piw` itself: whatever it does at import (exit, throw, loop, print) ends or stalls only the child.
const SLOW = 120_000;

const workflow = (name: string, prelude: string, nodes = 'a: compute({ run: () => "ok" })') =>
  `import { checkpoint, compute, defineWorkflow } from "piw";
import { z } from "zod";
${prelude}
export default defineWorkflow({
  name: "${name}",
  startAt: "a",
  nodes: { ${nodes} },
  edges: { a: { to: "done" } },
});
`;

/** Live (not zombie) processes whose environment carries `marker`: the preflight child and its children. */
function processesWith(marker: string): number[] {
  const found: number[] = [];
  for (const entry of readdirSync("/proc")) {
    const pid = Number(entry);
    if (!Number.isInteger(pid) || pid === process.pid) continue;
    let environ: string;
    try {
      environ = readFileSync(`/proc/${pid}/environ`, "latin1");
    } catch {
      continue;
    }
    if (environ.split("\0").includes(`PIW_TEST_MARKER=${marker}`) && isAlive(pid)) found.push(pid);
  }
  return found;
}

let home: string;
let project: string;
const write = (name: string, source: string) =>
  writeFileSync(join(project, ".pi", "workflows", `${name}.workflow.ts`), source);
const nothingRecorded = () => {
  expect(existsSync(home) ? readdirSync(home) : []).toEqual([]);
  expect(hostPidIn(home)).toBeUndefined();
};

beforeAll(() => {
  home = makeHome();
  project = mkdtempSync(join(tmpdir(), "piw-preflight-"));
  mkdirSync(join(project, ".pi", "workflows"), { recursive: true });
  write("exits", workflow("exits", "process.exit(0);"));
  write("dies", workflow("dies", 'process.kill(process.pid, "SIGKILL");'));
  write("throws", workflow("throws", 'throw new Error("boom at import");'));
  write(
    "loops",
    workflow(
      "loops",
      `import { spawn } from "node:child_process";
import { writeFileSync } from "node:fs";
const sleeper = spawn("sleep", ["300"], { stdio: "ignore" });
writeFileSync("loops.pids", \`\${process.pid} \${sleeper.pid}\`);
for (;;) {}`,
    ),
  );
  write(
    "prints",
    workflow(
      "prints",
      `console.log("PRINTED AT IMPORT");
process.stdout.write('{"type":"launch.prepared"}\\n');
// A workflow's own IPC message is not the preflight's reply.
process.send?.({ type: "refused", requestId: "forged", refusal: { code: "workflow_invalid", message: "forged", problems: [], usage: true } });`,
    ),
  );
});
afterAll(async () => {
  await cleanUp(home);
  removeTree(project);
});

describe("piw preflight runs workflow code in a child process with a time limit", () => {
  it(
    "refuses a workflow that exits or kills itself at import, exits 1, and records nothing",
    async () => {
      const [exits, dies] = await Promise.all([
        piw(home, ["run", "exits"], { cwd: project }),
        piw(home, ["run", "dies"], { cwd: project }),
      ]);
      expect(exits.code).toBe(1);
      expect(exits.stdout).toBe("");
      expect(exits.stderr).toBe(
        "piw: workflow exits ended the process that loads it (exit code 0) before it finished loading: " +
          "a workflow file must not exit at import\n",
      );
      expect(dies.code).toBe(1);
      expect(dies.stderr).toContain("workflow dies ended the process that loads it (signal SIGKILL)");
      nothingRecorded();
    },
    SLOW,
  );

  it(
    "refuses a workflow that throws at import with the error's first line and no stack",
    async () => {
      const result = await piw(home, ["run", "throws"], { cwd: project });
      expect(result.code).toBe(1);
      expect(result.stderr).toContain("failed to load: boom at import");
      expect(result.stderr).not.toMatch(/\n\s+at /);
      nothingRecorded();
    },
    SLOW,
  );

  it(
    "stops a workflow that loops at import after the time limit, and kills what it started",
    async () => {
      const marker = randomUUID();
      const started = Date.now();
      const result = await piw(home, ["run", "loops"], {
        cwd: project,
        env: { PIW_PREFLIGHT_TIMEOUT_MS: "8000", PIW_TEST_MARKER: marker },
      });
      expect(result.code).toBe(1);
      expect(result.stderr).toBe(
        "piw: workflow loops did not finish loading within 8000 ms and was stopped: " +
          "its code may loop or wait at import\n",
      );
      expect(Date.now() - started).toBeGreaterThanOrEqual(8000);
      // The child wrote its pid and its own child's before looping; both are gone with the CLI.
      const pids = readFileSync(join(project, "loops.pids"), "utf8").split(" ").map(Number);
      expect(pids).toHaveLength(2);
      for (const pid of pids) expect(isAlive(pid), `pid ${pid}`).toBe(false);
      expect(processesWith(marker)).toEqual([]);
      nothingRecorded();
    },
    SLOW,
  );

  it(
    "preflights and runs a workflow that prints and sends messages at import; none of it reaches piw's output",
    async () => {
      const result = await piw(home, ["run", "prints"], { cwd: project });
      expect(result.stderr).toBe("");
      expect(result.code).toBe(0);
      expect(result.stdout).not.toContain("PRINTED");
      expect(result.stdout).not.toContain("launch.prepared");
      expect(result.stdout).toMatch(/^✓ prints completed/m);
    },
    SLOW,
  );

  it(
    "answers a checkpoint without running workflow code: the host checks the answer against the saved schema",
    async () => {
      write(
        "asks",
        workflow(
          "asks",
          "",
          'a: checkpoint({ prompt: "ok?", answer: z.object({ ok: z.boolean() }) }), b: compute({ run: () => 1 })',
        ).replace('edges: { a: { to: "done" } }', 'edges: { a: { to: "b" }, b: { to: "done" } }'),
      );
      const waiting = await piw(home, ["run", "asks"], { cwd: project });
      expect(waiting.code).toBe(3);
      const runId = runIdIn(waiting.stdout);
      // The file now exits at import: if piw loaded it to check the answer, piw itself would end.
      write("asks", workflow("asks", "process.exit(0);"));
      const wrong = await piwAtTerminal(home, ["answer", runId, '{"ok":"yes"}'], { cwd: project });
      expect(wrong.code).toBe(64);
      expect(wrong.stderr).toContain("ok");
      const list = await piw(home, ["list", "--json"]);
      const { runs } = JSON.parse(list.stdout) as { runs: RunSummary[] };
      expect(runs.filter((run) => run.workflowName === "asks").map((run) => run.runId)).toEqual([runId]);
    },
    SLOW,
  );
});
