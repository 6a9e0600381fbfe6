import { readdirSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import {
  isAllowedTransition,
  RUN_TRANSITIONS,
  type RunStatus,
  runStatusSchema,
  type TraceEventType,
} from "@piw/protocol";
import Database from "better-sqlite3";
import ts from "typescript";
import { afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { StoreContext } from "../src/context.js";
import type { RunStore } from "../src/index.js";
import type { RunRow } from "../src/rows.js";
import { IllegalTransitionError, transitionRun } from "../src/run-writes.js";
import { openHarness, preparedRun, type StoreHarness, saved, snapshot, unchanged } from "./fixtures.js";
import { DRIVERS, moveTo, runIn } from "./status-drivers.js";

// Every write of `runs.status` goes through `transitionRun`, which holds the run-status table. This file
// proves it three ways: the source has no other status write (SQL and TypeScript alike), every legal
// edge is driven through the store's own operations on a real database, and every illegal one is
// refused without a trace.

const SRC = resolve(import.meta.dirname, "../src");
const STATUSES = runStatusSchema.options;
const EDGES = STATUSES.flatMap((from) => RUN_TRANSITIONS[from].map((to) => `${from}->${to}`));

let h: StoreHarness;
beforeEach(() => {
  h = openHarness();
});
afterEach(() => h.cleanup());

function statusOf(store: RunStore, runId: string): RunStatus {
  const run = store.getRun(runId);
  if (!run) throw new Error(`no run ${runId}`);
  return run.status;
}

function lastEventType(store: RunStore, runId: string): TraceEventType | undefined {
  return store.listRunEvents(runId, 0, 10_000).at(-1)?.type;
}

describe("every legal status change", () => {
  it("has a driver for each edge of the table", () => {
    expect([...new Set(DRIVERS.map((d) => `${d.from}->${d.to}`))].sort()).toEqual([...EDGES].sort());
  });

  for (const driver of DRIVERS) {
    it(`${driver.from} -> ${driver.to}: ${driver.how}`, () => {
      const runId = "edge-1";
      driver.setup(h.store, runId);
      expect(statusOf(h.store, runId)).toBe(driver.from);
      const before = h.store.getRun(runId);
      driver.move(h.store, runId, h.clock);
      const after = h.store.getRun(runId);
      expect(after?.status).toBe(driver.to);
      expect(after?.revision).toBeGreaterThan(before?.revision ?? Number.POSITIVE_INFINITY);
      expect(lastEventType(h.store, runId)).toBe(driver.event);
    });
  }
});

describe("every illegal status change", () => {
  const illegal = STATUSES.flatMap((from) =>
    STATUSES.filter((to) => to !== from && !isAllowedTransition(from, to)).map((to) => [from, to] as const),
  );

  it("is refused by the store's operations and changes nothing", () => {
    for (const [from, to] of illegal) {
      const runId = `illegal-${from}-${to}`;
      runIn(h.store, runId, from);
      expect(statusOf(h.store, runId), runId).toBe(from);
      const t = unchanged(h.store, [runId], () => moveTo(h.store, runId, to));
      expect(t.kind, `${from} -> ${to}`).toBe("conflict");
      expect(statusOf(h.store, runId)).toBe(from);
    }
    expect(illegal.length).toBe(STATUSES.length * (STATUSES.length - 1) - EDGES.length);
  });

  it("is refused by the one status writer itself, before anything is written", () => {
    saved(h.store.reservePreparedRun(preparedRun("guard-1")));
    const db = new Database(h.store.file);
    try {
      const ctx = new StoreContext(db, () => h.clock.now, { maxBlobBytes: 1 << 20 });
      const saved = ctx.getRunRow("guard-1") as RunRow;
      const before = snapshot(h.store, "guard-1");
      for (const [from, to] of illegal) {
        const row: RunRow = { ...saved, status: from };
        let thrown: unknown;
        try {
          ctx.tx(() => transitionRun(ctx, row, to, { paused: 1 }, { type: "run.pause_requested" }));
        } catch (error) {
          thrown = error;
        }
        expect(thrown, `${from} -> ${to}`).toBeInstanceOf(IllegalTransitionError);
        expect(thrown).toMatchObject({ code: "illegal_transition", from, to, runId: "guard-1" });
        expect(row).toEqual({ ...saved, status: from });
      }
      expect(snapshot(h.store, "guard-1")).toEqual(before);
    } finally {
      db.close();
    }
  });
});

describe("the store's source", () => {
  const files = readdirSync(SRC)
    .filter((name) => name.endsWith(".ts"))
    .map((name) => ({ name, text: readFileSync(join(SRC, name), "utf8") }));

  it("writes the runs table and the trace only in run-writes.ts", () => {
    const writesRuns = /\b(UPDATE|INSERT\s+INTO|REPLACE\s+INTO|DELETE\s+FROM)\s+(runs|run_events)\b/i;
    expect(files.filter((f) => writesRuns.test(f.text)).map((f) => f.name)).toEqual(["run-writes.ts"]);
    // The one INSERT creates runs `queued`; every UPDATE is the guarded one built from typed columns.
    const writer = files.find((f) => f.name === "run-writes.ts")?.text ?? "";
    expect(writer.match(/INSERT INTO runs\b[^`]*'queued'/g)).toHaveLength(1);
    expect(writer.match(/UPDATE runs SET/g)).toHaveLength(1);
  });

  describe("as the type checker sees it", () => {
    const calls: Array<{ file: string; writer: string; targets: RunStatus[] }> = [];
    const rawWrites: string[] = [];
    // Type-checking the store with the protocol's zod schemas takes seconds on a busy machine.
    beforeAll(() => {
      const program = ts.createProgram([join(SRC, "index.ts")], {
        target: ts.ScriptTarget.ES2023,
        module: ts.ModuleKind.NodeNext,
        moduleResolution: ts.ModuleResolutionKind.NodeNext,
        strict: true,
        noEmit: true,
        skipLibCheck: true,
        allowImportingTsExtensions: true,
        paths: { "@piw/protocol": [resolve(SRC, "../../protocol/src/index.ts")] },
      });
      const checker = program.getTypeChecker();
      const writerFile = join(SRC, "run-writes.ts");
      for (const file of program.getSourceFiles()) {
        if (!file.fileName.startsWith(SRC)) continue;
        const visit = (node: ts.Node): void => {
          if (ts.isCallExpression(node) && ts.isIdentifier(node.expression)) {
            const name = node.expression.text;
            if (name === "transitionRun") {
              const type = checker.getTypeAtLocation(node.arguments[2] as ts.Node);
              const members = type.isUnion() ? type.types : [type];
              calls.push({
                file: file.fileName.slice(SRC.length + 1),
                writer: enclosingFunction(node),
                targets: members.map(
                  (t) => (t.isStringLiteral() ? t.value : checker.typeToString(t)) as RunStatus,
                ),
              });
            }
            if (name === "writeRun" && file.fileName !== writerFile) rawWrites.push(file.fileName);
          }
          ts.forEachChild(node, visit);
        };
        visit(file);
      }
    }, 180_000);

    it("finds no status write outside transitionRun", () => {
      expect(rawWrites).toEqual([]);
      expect(calls.length).toBeGreaterThan(0);
    });

    it("writes only statuses the table leads to, each through a writer a driver above exercises", () => {
      const targets = new Set(EDGES.map((edge) => edge.split("->")[1]));
      const driven = new Set(DRIVERS.map((d) => `${d.writer}:${d.to}`));
      for (const call of calls) {
        for (const to of call.targets) {
          expect(STATUSES, `${call.file} ${call.writer}`).toContain(to);
          expect(targets.has(to), `${call.writer} writes ${to}`).toBe(true);
          expect(driven.has(`${call.writer}:${to}`), `no driver for ${call.writer} -> ${to}`).toBe(true);
        }
      }
      // And every driver names a real writer and a status it can write.
      const written = new Set(calls.flatMap((call) => call.targets.map((to) => `${call.writer}:${to}`)));
      expect([...driven].filter((pair) => !written.has(pair))).toEqual([]);
    });
  });
});

function enclosingFunction(node: ts.Node): string {
  for (let at: ts.Node | undefined = node.parent; at; at = at.parent) {
    if ((ts.isFunctionDeclaration(at) || ts.isMethodDeclaration(at)) && at.name) return at.name.getText();
  }
  return "(top level)";
}
