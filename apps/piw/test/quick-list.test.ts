import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { connectHost, quickListRuns } from "@piw/client";
import { quickRunSummaries, runSummarySchema } from "@piw/protocol";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { removeTree, waitFor } from "@piw/test-kit";
import { BINS, builtPiw, recordLoads, REPO, ZOD } from "./built-bins.js";

/**
 * Plain `piw list` takes a quick route on a running host (no zod, see apps/piw/src/quick-list-command.ts).
 * These tests run the built bins, as a user does, against one state folder with a few real runs.
 */

const scratch = mkdtempSync(join(tmpdir(), "piw-quick-list-"));
const stateDir = join(scratch, "state");
const env = { ...process.env, PIW_HOME: stateDir, NO_COLOR: "1" };
const piw = builtPiw(env, scratch);

const BREAKS = `import { compute, defineWorkflow } from "piw";
export default defineWorkflow({
  name: "breaks",
  startAt: "check",
  nodes: { check: compute({ run: () => { throw new Error("no"); } }) },
  edges: { check: { to: "done" } },
});
`;

// Reports run-wide progress, then parks: a run that carries runProgress (as a waiting monitor does).
const REPORTS = `import { compute, defineWorkflow, wait } from "piw";
export default defineWorkflow({
  name: "reports",
  startAt: "first",
  nodes: {
    first: compute({
      run: (ctx) => {
        ctx.progress({ done: 1, total: 3, message: "one of three", eta: Date.now() + 7_200_000, scope: "run" });
        return 1;
      },
    }),
    nap: wait({ ms: 3_600_000 }),
  },
  edges: { first: { to: "nap" }, nap: { to: "done" } },
});
`;

beforeAll(async () => {
  mkdirSync(join(scratch, ".pi", "workflows"), { recursive: true });
  writeFileSync(join(scratch, ".pi", "workflows", "breaks.workflow.ts"), BREAKS);
  writeFileSync(join(scratch, ".pi", "workflows", "reports.workflow.ts"), REPORTS);
  // A completed run, a failed one (with its saved error), a parked one with run progress, and a host
  // left running.
  expect(piw(BINS[0] as string, ["run", join(REPO, "examples", "hello.workflow.ts"), "hi"]).status).toBe(0);
  expect(piw(BINS[0] as string, ["run", "breaks"]).status).not.toBe(0);
  const reports = piw(BINS[0] as string, ["run", "reports", "--detach"]);
  expect(reports.status, reports.stderr).toBe(0);
  const runId = reports.stdout.match(/\breports-[a-z0-9]+-[0-9a-f]{8}\b/)?.[0] ?? "";
  await waitFor(
    `${runId} parked`,
    () =>
      (JSON.parse(piw(BINS[0] as string, ["status", runId, "--json"]).stdout) as { status?: string })
        .status === "parked",
    30_000,
  );
}, 120_000);

afterAll(() => {
  piw(BINS[0] as string, ["host", "stop"]);
  removeTree(scratch);
});

describe("plain piw list on a running host", () => {
  it.each(BINS)("%s prints what the full route prints, and loads no zod", (bin) => {
    const log = join(scratch, `${bin.replaceAll("/", "-")}.log`);
    const quick = piw(bin, ["list"], recordLoads(log));
    expect(quick.status, quick.stderr).toBe(0);
    expect(
      readFileSync(log, "utf8")
        .split("\n")
        .filter((url) => ZOD.test(url)),
    ).toEqual([]);
    expect(quick.stdout).toMatch(/hello-.*completed/);
    expect(quick.stdout).toMatch(/breaks-.*failed/);
    expect(quick.stdout).toMatch(/reports-.*parked/);

    // The full route: `--limit 50` is the same request, through the CLI that parses with zod.
    const fullLog = join(scratch, `${bin.replaceAll("/", "-")}-full.log`);
    const full = piw(bin, ["list", "--limit", "50"], recordLoads(fullLog));
    expect(full.status, full.stderr).toBe(0);
    expect(
      readFileSync(fullLog, "utf8")
        .split("\n")
        .some((url) => ZOD.test(url)),
    ).toBe(true);
    // A run's age, and a parked run's duration, are read from the clock when the list is drawn; the two
    // were drawn moments apart (and a column's width follows its widest time).
    const ageless = (text: string) =>
      text.replace(/\b\d+(\.\d+)?(ms|[smhd])( ago)?\b/g, "<t>").replace(/ +/g, " ");
    expect(ageless(quick.stdout)).toBe(ageless(full.stdout));
  });

  it.each(BINS)("%s list --json prints what the full route prints, and loads no zod", (bin) => {
    const log = join(scratch, `${bin.replaceAll("/", "-")}-json.log`);
    const quick = piw(bin, ["list", "--json"], recordLoads(log));
    expect(quick.status, quick.stderr).toBe(0);
    expect(
      readFileSync(log, "utf8")
        .split("\n")
        .filter((url) => ZOD.test(url)),
    ).toEqual([]);
    const full = piw(bin, ["list", "--json", "--limit", "50"]);
    expect(full.status, full.stderr).toBe(0);
    const printed = JSON.parse(quick.stdout) as { schema: string; runs: unknown[] };
    expect(printed.schema).toBe("piw.list.v1");
    expect(printed.runs.length).toBe(3);
    expect(printed).toEqual(JSON.parse(full.stdout));
  });
});

describe("the quick check of the run list's reply", () => {
  it("takes a real host's reply and gives exactly what runSummarySchema gives", async () => {
    const client = await connectHost({ stateDir, client: "test", autoStart: false });
    try {
      const parsed = await client.call("runs.list", { limit: 50 });
      expect(parsed.length).toBe(3);
      expect(parsed.some((run) => run.runProgress !== undefined)).toBe(true);
      expect(await quickListRuns(stateDir, { limit: 50 })).toEqual(parsed);
    } finally {
      client.close();
    }
  });

  it("never takes a summary that runSummarySchema refuses, and refuses what it does not know", async () => {
    const runs = (await quickListRuns(stateDir, { limit: 50 })) ?? [];
    expect(runs.length).toBe(3);
    const bad: unknown[] = [undefined, null, 42, -1.5, "", "x".repeat(5_000), true, {}, [], { kind: "nope" }];
    let refused = 0;
    let tried = 0;
    const check = (mutated: unknown) => {
      tried += 1;
      const quick = quickRunSummaries([mutated]);
      if (quick === undefined) {
        refused += 1;
        return;
      }
      // Whatever the quick check takes, the schema takes too, with the same result.
      const full = runSummarySchema.safeParse(mutated);
      expect(full.success, JSON.stringify(mutated).slice(0, 300)).toBe(true);
      expect(quick[0]).toEqual(full.data);
    };
    for (const run of runs) {
      const plain = JSON.parse(JSON.stringify(run)) as Record<string, unknown>;
      expect(quickRunSummaries([plain])).toEqual([plain]);
      for (const key of Object.keys(runSummarySchema.shape)) {
        for (const value of bad) check({ ...plain, [key]: value });
        // One level down: every field of a nested object.
        const nested = plain[key];
        if (typeof nested === "object" && nested !== null && !Array.isArray(nested)) {
          for (const inner of Object.keys(nested)) {
            for (const value of bad) check({ ...plain, [key]: { ...nested, [inner]: value } });
          }
        }
      }
      // A field it does not know (a newer host's): refused, so the full route parses it.
      expect(quickRunSummaries([{ ...plain, added: 1 }])).toBeUndefined();
      // Run progress on every run, at the schema's edges (a message of 200 characters, emoji being two
      // UTF-16 units each, and one more; the estimate's confidence; unknown keys).
      const progress = {
        path: "nap",
        visit: 1,
        done: 0,
        total: null,
        message: null,
        updatedAt: 1,
        eta: { at: 2, confidence: "medium" },
      };
      const edges: Record<string, unknown[]> = {
        message: ["\u{1F600}".repeat(200), "\u{1F600}".repeat(201), "x".repeat(201), ""],
        done: [-1, 0.5],
        eta: [null, { at: 2, confidence: "sure" }, { at: 2 }, { at: 2, confidence: "low", x: 1 }],
        visit: [0, 1.5],
        added: [1],
      };
      check({ ...plain, runProgress: progress });
      check({ ...plain, runProgress: null });
      for (const [key, values] of Object.entries(edges)) {
        for (const value of values) check({ ...plain, runProgress: { ...progress, [key]: value } });
      }
      expect(quickRunSummaries([{ ...plain, runProgress: progress }])).toBeDefined();
      expect(
        quickRunSummaries([{ ...plain, runProgress: { ...progress, message: "\u{1F600}".repeat(200) } }]),
      ).toBeDefined();
    }
    expect(tried).toBeGreaterThan(400);
    expect(refused).toBeGreaterThan(tried / 2);
  });
});
