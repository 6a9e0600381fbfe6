import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { connectHost, quickGetRun } from "@piw/client";
import { quickRunView, runViewSchema } from "@piw/protocol";
import { removeTree, waitFor } from "@piw/test-kit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BINS, builtPiw, recordLoads, REPO, ZOD } from "./built-bins.js";

/**
 * Plain `piw status <runId>` takes a quick route on a running host (no zod, see
 * apps/piw/src/quick-status-command.ts). These tests run the built bins, as a user does, against one
 * state folder with a run in each state a finished or stopped run can be in.
 */

const scratch = mkdtempSync(join(tmpdir(), "piw-quick-status-"));
const stateDir = join(scratch, "state");
const env = { ...process.env, PIW_HOME: stateDir, NO_COLOR: "1" };
const piw = builtPiw(env, scratch);

const WORKFLOWS: Record<string, string> = {
  breaks: `import { compute, defineWorkflow } from "piw";
export default defineWorkflow({
  name: "breaks",
  startAt: "check",
  nodes: { check: compute({ run: () => { throw new Error("no"); } }) },
  edges: { check: { to: "done" } },
});
`,
  // Parks on the clock for an hour: a parked run, and (cancelled) a cancelled one.
  sleeps: `import { compute, defineWorkflow, wait } from "piw";
export default defineWorkflow({
  name: "sleeps",
  startAt: "first",
  nodes: { first: compute({ run: () => 1 }), nap: wait({ ms: 3_600_000 }), last: compute({ run: () => 2 }) },
  edges: { first: { to: "nap" }, nap: { to: "last" }, last: { to: "done" } },
});
`,
  // Reports run-wide progress, then parks: a parked run that carries runProgress (as a waiting monitor does).
  reports: `import { compute, defineWorkflow, wait } from "piw";
export default defineWorkflow({
  name: "reports",
  startAt: "first",
  nodes: {
    first: compute({
      run: (ctx) => {
        ctx.progress({ done: 1, total: 3, message: "one of three \u{1F600}", eta: Date.now() + 7_200_000, scope: "run" });
        return 1;
      },
    }),
    nap: wait({ ms: 3_600_000 }),
  },
  edges: { first: { to: "nap" }, nap: { to: "done" } },
});
`,
  // Branches: the status lists them under their fork.
  forks: `import { compute, defineWorkflow, parallel } from "piw";
export default defineWorkflow({
  name: "forks",
  startAt: "both",
  nodes: {
    both: parallel({ branches: { a: compute({ run: () => 1 }), b: compute({ run: () => 2 }) }, join: "all" }),
    after: compute({ run: ({ outputs }) => outputs.both }),
  },
  edges: { both: { to: "after" }, after: { to: "done" } },
});
`,
};

const MAIN = BINS[0] as string;
/** The run ID of each kind of run, by the state word `piw status` shows. */
const runs = new Map<string, string>();

function runIdOf(stdout: string): string {
  const id = stdout.match(/\b((hello|breaks|sleeps|forks|approval|reports)-[a-z0-9]+-[0-9a-f]{8})\b/)?.[1];
  if (id === undefined) throw new Error(`no run ID in ${stdout.slice(0, 300)}`);
  return id;
}

async function parked(runId: string): Promise<void> {
  await waitFor(
    `${runId} parked`,
    () =>
      (JSON.parse(piw(MAIN, ["status", runId, "--json"]).stdout) as { status?: string }).status === "parked",
    30_000,
  );
}

beforeAll(async () => {
  const dir = join(scratch, ".pi", "workflows");
  mkdirSync(dir, { recursive: true });
  for (const [name, source] of Object.entries(WORKFLOWS))
    writeFileSync(join(dir, `${name}.workflow.ts`), source);
  const hello = piw(MAIN, ["run", join(REPO, "examples", "hello.workflow.ts"), "hi"]);
  expect(hello.status, hello.stderr).toBe(0);
  runs.set("completed", runIdOf(hello.stdout));
  runs.set("failed", runIdOf(piw(MAIN, ["run", "breaks"]).stdout + piw(MAIN, ["list"]).stdout));
  runs.set("branches", runIdOf(piw(MAIN, ["run", "forks"]).stdout));
  const approval = ["run", join(REPO, "examples", "approval.workflow.ts"), "--input-json", '{"change":"x"}'];
  runs.set("waiting", runIdOf(piw(MAIN, approval).stdout));
  for (const state of ["parked", "cancelled"]) {
    const started = piw(MAIN, ["run", "sleeps", "--detach"]);
    expect(started.status, started.stderr).toBe(0);
    const runId = runIdOf(started.stdout);
    await parked(runId);
    if (state === "cancelled") expect(piw(MAIN, ["cancel", runId]).status).toBe(0);
    runs.set(state, runId);
  }
  const reports = piw(MAIN, ["run", "reports", "--detach"]);
  expect(reports.status, reports.stderr).toBe(0);
  const reporting = runIdOf(reports.stdout);
  await parked(reporting);
  runs.set("reporting progress", reporting);
}, 180_000);

afterAll(() => {
  piw(MAIN, ["host", "stop"]);
  removeTree(scratch);
});

describe("plain piw status on a running host", () => {
  it.each(BINS)("%s prints what the full route prints for a run in each state, and loads no zod", (bin) => {
    expect([...runs.keys()].sort()).toEqual([
      "branches",
      "cancelled",
      "completed",
      "failed",
      "parked",
      "reporting progress",
      "waiting",
    ]);
    for (const [state, runId] of runs) {
      const log = join(scratch, `${bin.replaceAll("/", "-")}-${state}.log`);
      const quick = piw(bin, ["status", runId], recordLoads(log));
      expect(quick.status, quick.stderr).toBe(0);
      expect(
        readFileSync(log, "utf8")
          .split("\n")
          .filter((url) => ZOD.test(url)),
        state,
      ).toEqual([]);
      // The full route: `--` ends the options, so the same request goes through the CLI that parses with zod.
      const fullLog = join(scratch, `${bin.replaceAll("/", "-")}-${state}-full.log`);
      const full = piw(bin, ["status", "--", runId], recordLoads(fullLog));
      expect(full.status, full.stderr).toBe(0);
      expect(
        readFileSync(fullLog, "utf8")
          .split("\n")
          .some((url) => ZOD.test(url)),
      ).toBe(true);
      // Ages and a running clock are read when the status is drawn; the two were drawn moments apart.
      const timeless = (text: string) => text.replace(/\b\d+(\.\d+)?(ms|[smhd])( ago)?\b/g, "<t>");
      expect(timeless(quick.stdout), state).toBe(timeless(full.stdout));
    }
    expect(piw(bin, ["status", runs.get("branches") ?? ""]).stdout).toMatch(/branch a/);
    expect(piw(bin, ["status", runs.get("waiting") ?? ""]).stdout).toMatch(/^asks /m);
    expect(piw(bin, ["status", runs.get("reporting progress") ?? ""]).stdout).toMatch(/one of three/);
  });

  it.each(BINS)("%s still answers an unknown or malformed run ID with the typed error", (bin) => {
    const missing = piw(bin, ["status", "nope-0-00000000"]);
    expect(missing.status).toBe(1);
    expect(missing.stdout).toBe("");
    expect(missing.stderr).toBe("piw: no run nope-0-00000000\n");
    const malformed = piw(bin, ["status", "no run"]);
    expect(malformed.status).toBe(64);
    expect(malformed.stderr).toMatch(/^piw: "no run" is not a run ID/);
  });
});

describe("the quick check of the run view's reply", () => {
  it("takes a real host's reply and gives exactly what runViewSchema gives", async () => {
    const client = await connectHost({ stateDir, client: "test", autoStart: false });
    try {
      for (const runId of runs.values()) {
        const parsed = await client.call("runs.get", { runId });
        expect(parsed).not.toBeNull();
        expect(await quickGetRun(stateDir, runId)).toEqual(parsed);
      }
      expect(await quickGetRun(stateDir, "nope-0-00000000")).toBeUndefined();
    } finally {
      client.close();
    }
  });

  it("never takes a view that runViewSchema refuses, and refuses what it does not know", async () => {
    const bad: unknown[] = [undefined, null, 42, -1.5, "", "x".repeat(5_000), true, {}, [], { kind: "nope" }];
    let refused = 0;
    let tried = 0;
    const check = (mutated: unknown) => {
      tried += 1;
      const quick = quickRunView(mutated);
      if (quick === undefined) {
        refused += 1;
        return;
      }
      // Whatever the quick check takes, the schema takes too, with the same result.
      const full = runViewSchema.safeParse(mutated);
      expect(full.success, JSON.stringify(mutated).slice(0, 300)).toBe(true);
      expect(quick).toEqual(full.data);
    };
    /** Every value of `value` replaced, in turn, by each bad value, at every depth. */
    const mutations = (value: unknown, replace: (v: unknown) => unknown): void => {
      for (const b of bad) check(replace(b));
      if (Array.isArray(value)) {
        value.forEach((item, i) => {
          mutations(item, (v) => replace(value.map((x, j) => (j === i ? v : x))));
        });
      } else if (typeof value === "object" && value !== null) {
        for (const [key, inner] of Object.entries(value)) {
          // A JSON value (input, output, answer) may be anything.
          if (key === "value" || key === "answer" || key === "answerSchema") continue;
          mutations(inner, (v) => replace({ ...value, [key]: v }));
        }
      }
    };
    for (const runId of runs.values()) {
      const view = (await quickGetRun(stateDir, runId)) as unknown;
      expect(view).toBeDefined();
      mutations(view, (v) => v);
      // A field it does not know (a newer host's, or a live one it does not check): the full route.
      expect(quickRunView({ ...(view as object), added: 1 })).toBeUndefined();
      expect(quickRunView({ ...(view as object), progress: [] })).toBeUndefined();
    }
    // A pushed view (which `piw run`'s quick route checks the same way) may name the visits it no
    // longer shows (the passed-visits rule): those are held to the schema too.
    const shown = (await quickGetRun(stateDir, runs.values().next().value ?? "")) as unknown as object;
    const passed = (visit: number, state: string, errorCode: string | null) => ({
      path: "check",
      visit,
      attempt: 1,
      state,
      startedAt: 1_764_000_000_000 + visit,
      finishedAt: 1_764_000_000_004 + visit,
      errorCode,
    });
    const withPassed = {
      ...shown,
      passed: [passed(1, "failed", "node_failed"), passed(2, "succeeded", null)],
      passedOmitted: 3,
    };
    expect(quickRunView(withPassed)).toBeDefined();
    const refusedBefore = refused;
    mutations(withPassed, (v) => v);
    expect(refused).toBeGreaterThan(refusedBefore);
    expect(quickRunView({ ...withPassed, passed: [passed(1, "running", null)] })).toBeUndefined();
    // Run progress at the schema's edges: a message of 200 characters (emoji, two UTF-16 units each)
    // is taken, one more is not; counts and times as the schema bounds them.
    const reporting = (await quickGetRun(stateDir, runs.get("reporting progress") ?? "")) as unknown as {
      runProgress: Record<string, unknown>;
    };
    expect(reporting.runProgress).toMatchObject({ done: 1, total: 3, message: "one of three \u{1F600}" });
    const progressValues: Record<string, unknown[]> = {
      message: ["\u{1F600}".repeat(200), "\u{1F600}".repeat(201), "x".repeat(200), "x".repeat(201), "", null],
      done: [0, 2.5, -0.5, null, 1e308],
      total: [0, -1, null],
      visit: [1, 0, 2.5, 2 ** 53],
      updatedAt: [0, -5, 1.5, null],
      eta: [
        null,
        { at: 1, confidence: "low" },
        { at: 1, confidence: "sure" },
        { at: 1 },
        { at: 1, confidence: "high", x: 1 },
      ],
      path: ["nap", "", "a b", null],
    };
    let taken = 0;
    for (const [key, values] of Object.entries(progressValues)) {
      for (const value of values) {
        const mutated = { ...reporting, runProgress: { ...reporting.runProgress, [key]: value } };
        check(mutated);
        if (quickRunView(mutated) !== undefined) taken += 1;
      }
    }
    check({ ...reporting, runProgress: null });
    check({ ...reporting, runProgress: { ...reporting.runProgress, added: 1 } });
    expect(
      quickRunView({
        ...reporting,
        runProgress: { ...reporting.runProgress, message: "\u{1F600}".repeat(200) },
      }),
    ).toBeDefined();
    expect(taken).toBeGreaterThan(10);
    expect(tried).toBeGreaterThan(2_000);
    expect(refused).toBeGreaterThan(tried / 2);
  });
});
