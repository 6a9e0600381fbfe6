import { join } from "node:path";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import type { ColumnSpec } from "../src/column-spec.js";
import { STATE_FILE_NAME } from "../src/index.js";
import { TABLE_COLUMNS } from "../src/table-columns.js";
import { openHarness } from "./fixtures.js";

interface TableInfoRow {
  name: string;
  type: string;
  notnull: number;
  pk: number;
}

interface ColumnFacts {
  name: string;
  type: string;
  notNull: boolean;
  oneOf: readonly (string | number)[] | null;
}

/** The values of the column's `CHECK (… IN (…))` in its table's DDL, or null when it has none. */
function checkedValues(tableSql: string, column: string): (string | number)[] | null {
  const line = tableSql
    .split("\n")
    .map((text) => text.trim())
    .find((text) => text.startsWith(`${column} `));
  if (line === undefined) throw new Error(`no definition line for ${column}`);
  if (!line.includes("CHECK")) return null;
  const match = /CHECK \((?:(\w+) IS NULL OR )?(\w+) IN \(([^)]*)\)\)/.exec(line);
  if (match === null || match[2] !== column || (match[1] !== undefined && match[1] !== column)) {
    throw new Error(`the CHECK of ${column} is not a value list of that column: ${line}`);
  }
  return (match[3] ?? "").split(",").map((value) => {
    const trimmed = value.trim();
    return trimmed.startsWith("'") ? trimmed.slice(1, -1) : Number(trimmed);
  });
}

function specFacts(columns: Readonly<Record<string, ColumnSpec>>): ColumnFacts[] {
  return Object.entries(columns).map(([name, spec]) => ({
    name,
    type: spec.type,
    notNull: spec.notNull,
    oneOf: spec.oneOf,
  }));
}

describe("row types follow the schema", () => {
  it("describes every table of a real state file, column by column: name, type, nullability, CHECK values", () => {
    const harness = openHarness();
    const file = join(harness.dir, STATE_FILE_NAME);
    harness.store.close();
    const db = new Database(file, { readonly: true, fileMustExist: true });
    try {
      const tables = db
        .prepare(
          "SELECT name, sql FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name",
        )
        .all() as { name: string; sql: string }[];
      expect(tables.map((table) => table.name)).toEqual(Object.keys(TABLE_COLUMNS).sort());

      for (const table of tables) {
        const strict = db.pragma(`table_list(${table.name})`) as { strict: number }[];
        // A STRICT table keeps its PRIMARY KEY non-null and its types exact; the facts below rely on it.
        expect(
          strict.map((row) => row.strict),
          table.name,
        ).toEqual([1]);
        const info = db.pragma(`table_info(${table.name})`) as TableInfoRow[];
        const saved: ColumnFacts[] = info.map((column) => ({
          name: column.name,
          type: column.type,
          notNull: column.notnull === 1 || column.pk > 0,
          oneOf: checkedValues(table.sql, column.name),
        }));
        const described = TABLE_COLUMNS[table.name as keyof typeof TABLE_COLUMNS];
        expect(specFacts(described), table.name).toEqual(saved);
      }
    } finally {
      db.close();
      harness.cleanup();
    }
  });

  it("a primary key of a STRICT table is non-null, which the row types rely on", () => {
    const db = new Database(":memory:");
    try {
      db.exec("CREATE TABLE t (id TEXT PRIMARY KEY) STRICT");
      expect(() => db.prepare("INSERT INTO t (id) VALUES (NULL)").run()).toThrow(/NOT NULL/);
    } finally {
      db.close();
    }
  });
});
