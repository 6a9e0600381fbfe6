// A column as the DDL in `schema.ts` declares it, and the TypeScript type of its value in a row. Row
// types are derived from these specs (`RowOf`), and `row-types.test.ts` checks every spec against the
// table SQLite builds from the DDL, so a row type cannot drift from the schema unnoticed.

type SqlType = "TEXT" | "INTEGER" | "REAL" | "BLOB";

export interface ColumnSpec<T = unknown> {
  readonly type: SqlType;
  /** NOT NULL, or a PRIMARY KEY of a STRICT table (which SQLite also keeps non-null). */
  readonly notNull: boolean;
  /** The values the column's `CHECK (… IN (…))` allows; null when it has none. */
  readonly oneOf: readonly (string | number)[] | null;
  /** Type only, never set: the value's TypeScript type. */
  readonly value?: T;
}

function column<T>(type: SqlType, oneOf: readonly (string | number)[] | null): ColumnSpec<T> {
  return { type, notNull: true, oneOf };
}

export const text = (): ColumnSpec<string> => column("TEXT", null);
export const integer = (): ColumnSpec<number> => column("INTEGER", null);
export const real = (): ColumnSpec<number> => column("REAL", null);
export const blob = (): ColumnSpec<Buffer> => column("BLOB", null);

/** A TEXT column with `CHECK (… IN (values))`: its type is the union of the values. */
export function textOf<const V extends readonly string[]>(...values: V): ColumnSpec<V[number]> {
  return column("TEXT", values);
}

/** An INTEGER column with `CHECK (… IN (values))`, such as a 0/1 flag. */
export function integerOf<const V extends readonly number[]>(...values: V): ColumnSpec<V[number]> {
  return column("INTEGER", values);
}

/**
 * A TEXT column without a CHECK whose values only the store writes, from a type the protocol owns
 * (an error code, a turn's end reason): the row says what the writer guarantees, not what SQLite does.
 */
export function textAs<T extends string>(): ColumnSpec<T> {
  return column("TEXT", null);
}

/** The column without NOT NULL: its value may also be null. */
export function nullable<T>(spec: ColumnSpec<T>): ColumnSpec<T | null> {
  return { type: spec.type, notNull: false, oneOf: spec.oneOf };
}

export type TableSpec = Readonly<Record<string, ColumnSpec>>;

/** A row of a table, exactly as `SELECT *` returns it: one property per column, typed by its spec. */
export type RowOf<S extends TableSpec> = {
  -readonly [K in keyof S]: S[K] extends ColumnSpec<infer T> ? T : never;
};
