import type { StoreContext } from "./context.js";
import type { RunRow } from "./rows.js";
import type { RunUpdate } from "./run-writes.js";

/**
 * A run's private launch state is what its starter gave it and nobody else should keep reading: its
 * input and its environment. A run keeps them while it may still need them (one that ran a node, for
 * a restart); a start that ends during its launch, before its engine ran any node (a missing or
 * changed workflow file, a refused command, a cancel: the terminal facts' `duringLaunch`), lets go of
 * them. A continuation or restart has none of its own: it references its parent's, which the parent
 * keeps, so a failed restart can itself be restarted.
 */

/** A start whose engine never ran a node: the worker marks a run running before it loads the workflow. */
function launchOnly(row: RunRow): boolean {
  return row.origin_command === "start" && row.step_count === 0;
}

/**
 * What a terminal change of `row` to `to` clears: for a start that failed or was cancelled during its
 * launch, the columns that drop its private state and the blobs they referenced (to delete once the
 * row no longer holds them); nothing for any other run.
 */
export function clearedLaunchState(
  row: RunRow,
  to: "done" | "failed" | "cancelled",
): { columns: RunUpdate; blobs: string[] } {
  if (to === "done" || !launchOnly(row)) return { columns: {}, blobs: [] };
  const blobs = [row.input_hash, row.env_hash].filter((hash): hash is string => hash !== null);
  return { columns: { input_hash: null, env_hash: null }, blobs };
}

/** Every `<table>.<column>` that references `blobs`, read from the schema once per connection. */
const referencesByDb = new WeakMap<object, ReadonlyArray<{ table: string; column: string }>>();

function blobReferences(ctx: StoreContext): ReadonlyArray<{ table: string; column: string }> {
  const known = referencesByDb.get(ctx.db);
  if (known) return known;
  const tables = ctx.stmt("SELECT name FROM sqlite_schema WHERE type = 'table'").all() as { name: string }[];
  const found = tables.flatMap(({ name }) =>
    (ctx.db.pragma(`foreign_key_list(${name})`) as { table: string; from: string }[])
      .filter((fk) => fk.table === "blobs")
      .map((fk) => ({ table: name, column: fk.from })),
  );
  referencesByDb.set(ctx.db, found);
  return found;
}

/**
 * Delete a blob no row references any more, in the caller's transaction. Blobs are shared by content,
 * so one that another run, step, effect or message still references stays.
 */
export function dropBlobIfUnreferenced(ctx: StoreContext, hash: string): void {
  for (const { table, column } of blobReferences(ctx)) {
    if (ctx.stmt(`SELECT 1 FROM ${table} WHERE ${column} = ? LIMIT 1`).get(hash) !== undefined) return;
  }
  ctx.stmt("DELETE FROM blobs WHERE hash = ?").run(hash);
}
