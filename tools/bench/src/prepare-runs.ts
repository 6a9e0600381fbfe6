/**
 * Saves COUNT finished runs of a two-node compute workflow into STATE_DIR. Up to SAMPLE runs really
 * run, with the embedded runtime of the checkout at CHECKOUT (its own store and engine, so each side
 * of a bench writes the layout its host expects); the rest are copies of their rows under new run
 * IDs, made in one transaction (running 10,000 runs takes minutes on a busy machine).
 * Used by `pnpm bench:run` as a child: `tsx prepare-runs.ts CHECKOUT STATE_DIR COUNT`.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";

const SAMPLE = 100;
/** Tables whose rows a finished compute-only run has; a seeded run with rows elsewhere stops the copy. */
const COPIED = ["runs", "run_steps", "run_events", "run_progress"];

const WORKFLOW = `import { compute, defineWorkflow } from "piw";
import { z } from "zod";
export default defineWorkflow({
  name: "seeded",
  input: z.object({ n: z.number() }),
  startAt: "first",
  nodes: {
    first: compute({ run: ({ input }) => (input as { n: number }).n * 2 }),
    second: compute({ run: ({ outputs }) => ({ doubled: outputs.first }) }),
  },
  edges: { first: { to: "second" }, second: { to: "done" } },
});
`;

async function main(): Promise<void> {
  const [checkout, stateDir, rawCount] = process.argv.slice(2);
  const count = Number(rawCount);
  if (checkout === undefined || stateDir === undefined || !Number.isInteger(count) || count < 0) {
    throw new Error("usage: prepare-runs.ts CHECKOUT STATE_DIR COUNT");
  }
  const { EmbeddedRuntime } = await import(join(checkout, "packages/embedded/src/index.ts"));
  const { loadWorkflowFile } = await import(join(checkout, "packages/engine/src/index.ts"));
  const { RunStore } = await import(join(checkout, "packages/store/src/index.ts"));
  const dir = mkdtempSync(join(tmpdir(), "piw-seed-"));
  const file = join(dir, "seeded.workflow.ts");
  writeFileSync(file, WORKFLOW);
  const loaded = await loadWorkflowFile(file);
  const store = RunStore.open({ stateDir, synchronous: "NORMAL" });
  try {
    const runtime = new EmbeddedRuntime(store);
    // Runs wait on timers more than on the CPU: seed many at a time.
    let next = 0;
    const lane = async () => {
      for (let n = next++; n < Math.min(count, SAMPLE); n = next++) {
        const { runId, outcome } = await runtime.run({
          workflow: loaded.workflow,
          source: loaded.source,
          input: { n },
        });
        if (outcome.kind !== "completed") throw new Error(`seeded run ${runId} ended ${outcome.kind}`);
      }
    };
    await Promise.all(Array.from({ length: 64 }, lane));
  } finally {
    store.close();
  }
  copyRuns(join(stateDir, "state.db"), Math.ceil(count / SAMPLE) - 1, count);
}

/** Copies every seeded run's rows `copies` times under new run IDs, up to `count` runs in all. */
function copyRuns(file: string, copies: number, count: number): void {
  const db = new Database(file);
  try {
    const tables = (
      db.prepare("SELECT name FROM sqlite_schema WHERE type = 'table'").all() as Array<{ name: string }>
    )
      .map((t) => t.name)
      .filter((name) =>
        (db.prepare(`PRAGMA table_info(${name})`).all() as Array<{ name: string }>).some(
          (c) => c.name === "run_id",
        ),
      );
    for (const table of tables) {
      if (COPIED.includes(table)) continue;
      const row = db.prepare(`SELECT count(*) AS n FROM ${table} WHERE run_id LIKE 'seeded-%'`).get() as {
        n: number;
      };
      if (row.n > 0) throw new Error(`seeded runs have rows in ${table}, which this seeder does not copy`);
    }
    const ids = (
      db.prepare("SELECT run_id FROM runs WHERE run_id LIKE 'seeded-%' ORDER BY run_id").all() as Array<{
        run_id: string;
      }>
    ).map((r) => r.run_id);
    const statements = COPIED.map((table) => {
      const columns = (
        db.prepare(`PRAGMA table_info(${table})`).all() as Array<{ name: string; pk: number; type: string }>
      )
        // An INTEGER PRIMARY KEY (run_events.seq) numbers itself.
        .filter((c) => !(c.pk === 1 && c.type === "INTEGER"));
      const renamed = new Set(["run_id", "root_run_id", "parent_run_id"]);
      const select = columns.map((c) =>
        renamed.has(c.name) ? `replace(${c.name}, 'seeded-', @prefix)` : c.name,
      );
      return db.prepare(
        `INSERT INTO ${table} (${columns.map((c) => c.name).join(", ")}) SELECT ${select.join(", ")} FROM ${table} WHERE run_id = @runId`,
      );
    });
    db.transaction(() => {
      let saved = ids.length;
      for (let copy = 1; copy <= copies; copy += 1) {
        for (const runId of ids) {
          if (saved >= count) return;
          for (const statement of statements) statement.run({ prefix: `seeded-${copy}x`, runId });
          saved += 1;
        }
      }
    })();
  } finally {
    db.close();
  }
}

main().catch((error) => {
  process.stderr.write(`prepare-runs: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exitCode = 1;
});
