import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { removeTree } from "@piw/test-kit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BINS, builtPiw, loadsZod, recordLoads, REPO } from "./built-bins.js";

/**
 * Plain `piw run <workflow> [task words]` takes a quick route on a running host (no zod, see
 * apps/piw/src/quick-run-command.ts). These tests run the built bins, as a user does, and hold it to
 * printing what the full route prints (`piw run -- ...` takes the full route: `--` is an option word).
 */

const MAIN = BINS[0] as string;
const scratch = mkdtempSync(join(tmpdir(), "piw-quick-run-"));
const stateDir = join(scratch, "state");
const env = { ...process.env, PIW_HOME: stateDir, NO_COLOR: "1" };
const piw = builtPiw(env, scratch);
const HELLO = join(REPO, "examples", "hello.workflow.ts");
/** A workflow named by its path: a launch by name is not kept in the launch cache. */
const BREAKS = join(scratch, ".pi", "workflows", "breaks.workflow.ts");
const REPORTS = join(scratch, ".pi", "workflows", "reports.workflow.ts");

const WORKFLOWS: Record<string, string> = {
  breaks: `import { compute, defineWorkflow } from "piw";
export default defineWorkflow({
  name: "breaks",
  startAt: "check",
  nodes: { check: compute({ run: () => { throw new Error("no"); } }) },
  edges: { check: { to: "done" } },
});
`,
  // Reports a running step's progress, which the quick check of a view leaves to the full follower.
  reports: `import { compute, defineWorkflow } from "piw";
export default defineWorkflow({
  name: "reports",
  startAt: "first",
  nodes: {
    first: compute({
      run: async (ctx) => {
        ctx.progress({ done: 1, total: 2, message: "half way" });
        await new Promise((resolve) => setTimeout(resolve, 1_500));
        return 1;
      },
    }),
    last: compute({ run: () => 2 }),
  },
  edges: { first: { to: "last" }, last: { to: "done" } },
});
`,
};

/**
 * Output with what differs from run to run taken out: run IDs, durations, and the `running` lines of
 * a step, which show or not by how the host's views fall (either route may see one or skip it).
 */
function steady(text: string): string {
  return text
    .split("\n")
    .filter((line) => !/ running$/.test(line))
    .join("\n")
    .replace(/\b(hello|breaks|reports)-[a-z0-9]+-[0-9a-f]{8}\b/g, "<run>")
    .replace(/\b\d+(\.\d+)?(ms|[smhd])\b/g, "<t>");
}

beforeAll(() => {
  const dir = join(scratch, ".pi", "workflows");
  mkdirSync(dir, { recursive: true });
  for (const [name, source] of Object.entries(WORKFLOWS))
    writeFileSync(join(dir, `${name}.workflow.ts`), source);
  // Starts the host; then fills the launch cache for each workflow and task (the quick route's hit),
  // which it keeps only in a state folder that exists (the host makes it).
  expect(piw(MAIN, ["run", "--", HELLO, "world"]).status).toBe(0);
  for (const bin of BINS) {
    for (const args of [[HELLO, "world"], [BREAKS], [REPORTS]]) {
      const warm = piw(bin, ["run", "--", ...args]);
      expect(warm.stderr).not.toMatch(/unexpected/);
    }
  }
}, 120_000);

afterAll(() => {
  piw(MAIN, ["host", "stop"]);
  removeTree(scratch);
});

describe("plain piw run on a running host", () => {
  it.each(BINS)(
    "%s prints what the full route prints for a run that succeeds or fails, and loads no zod",
    (bin) => {
      for (const args of [[HELLO, "world"], [BREAKS]]) {
        const name = args[0] === HELLO ? "hello" : "breaks";
        const log = join(scratch, `${bin.replaceAll("/", "-")}-${name}.log`);
        const quick = piw(bin, ["run", ...args], recordLoads(log));
        expect(loadsZod(log), name).toBe(false);
        const fullLog = join(scratch, `${bin.replaceAll("/", "-")}-${name}-full.log`);
        const full = piw(bin, ["run", "--", ...args], recordLoads(fullLog));
        expect(loadsZod(fullLog)).toBe(true);
        expect(quick.status, quick.stderr).toBe(full.status);
        expect(steady(quick.stdout), name).toBe(steady(full.stdout));
        expect(quick.stderr).toBe(full.stderr);
      }
      expect(piw(bin, ["run", HELLO, "world"]).stdout).toMatch(/hello completed/);
      expect(piw(bin, ["run", BREAKS]).status).toBe(1);
    },
  );

  it("says a refused input as the full route does, and saves no run", () => {
    const before = piw(MAIN, ["list", "--json"]).stdout;
    const quick = piw(MAIN, ["run", HELLO]);
    const full = piw(MAIN, ["run", "--", HELLO]);
    expect(quick.status).toBe(64);
    expect({ stdout: quick.stdout, stderr: quick.stderr, status: quick.status }).toEqual({
      stdout: full.stdout,
      stderr: full.stderr,
      status: full.status,
    });
    expect(quick.stderr).toMatch(/^piw: the input does not match workflow hello's input/);
    expect(piw(MAIN, ["list", "--json"]).stdout).toBe(before);
    const missing = piw(MAIN, ["run", "nope"]);
    expect(missing.status).toBe(64);
    expect(missing.stderr).toBe(piw(MAIN, ["run", "--", "nope"]).stderr);
  });

  it("hands a run whose views it does not check to the full follower, which goes on from there", () => {
    const log = join(scratch, "reports.log");
    const quick = piw(MAIN, ["run", REPORTS], recordLoads(log));
    // The launch came from the cache: zod came with the full follower, given the run mid-way.
    expect(loadsZod(log)).toBe(true);
    const full = piw(MAIN, ["run", "--", REPORTS]);
    expect(quick.status, quick.stderr).toBe(0);
    expect(steady(quick.stdout)).toBe(steady(full.stdout));
    expect(quick.stdout).toMatch(/half way/);
    expect(quick.stderr).toBe("");
    expect(quick.stdout.match(/half way/g)).toHaveLength(1);
    // One run per start (two warming up): the full route's second reserve adopted the first's run.
    const { runs } = JSON.parse(piw(MAIN, ["list", "--json"]).stdout) as { runs: { runId: string }[] };
    const ids = (quick.stdout.match(/\breports-[a-z0-9]+-[0-9a-f]{8}\b/g) ?? []).filter(
      (id, i, all) => all.indexOf(id) === i,
    );
    expect(ids).toHaveLength(1);
    expect(runs.filter((run) => run.runId.startsWith("reports-"))).toHaveLength(4);
  });
});
