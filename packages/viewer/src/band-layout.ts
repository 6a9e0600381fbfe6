import type { GraphManifest } from "@piw/protocol";
import { branchIndex, branchLabel, enclosingBranches } from "./forks.js";

/**
 * A parallel node's branches drawn side by side: under the fork card a line splits into one column
 * per branch, each column holds that branch's cards top to bottom, and under the longest column the
 * columns meet again in a line that leads on to where the run goes after the join.
 */
export interface BandLayout {
  /** The parallel node's card. */
  fork: number;
  /** Its branches in the manifest's order, each with its cards top to bottom. */
  columns: BandColumn[];
  /** The row of the line that splits under the fork card; arrowheads into the columns are below it. */
  splitRow: number;
  /** The row where the columns meet; the arrowhead to `next` is below it. */
  mergeRow: number;
  /** The card the run goes to after the join when it comes next, else undefined. */
  next: number | undefined;
  /** The label of the fork's edge to `next`. */
  label: string | undefined;
}

interface BandColumn {
  name: string;
  title: string;
  /** What its banner says (branchLabel). */
  label: string;
  cards: number[];
}

/** Where each card goes: the main column (the root workflow's nodes and exits), or a band's column. */
export interface Stacks {
  bands: BandLayout[];
  /** The band and column of each card; undefined for a card of the main column. */
  columnOf: Array<{ band: number; column: number } | undefined>;
  /** The main column's cards, top to bottom. */
  main: number[];
  /** The next card below each card in its own column; undefined for the last one. */
  below: Array<number | undefined>;
  /** Each parallel node's band, by its card. */
  bandOf: Map<number, number>;
}

/**
 * Sorts the cards (`ids`, in flow order) into the main column and the branch columns. A node
 * belongs to the column of the outermost branch around it, so a parallel node inside a branch and
 * its own branches stack in that one column.
 */
export function stackCards(manifest: GraphManifest, ids: readonly string[]): Stacks {
  const refs = branchIndex(manifest);
  const columnOf: Stacks["columnOf"] = ids.map(() => undefined);
  const below: Stacks["below"] = ids.map(() => undefined);
  const bandOf = new Map<number, number>();
  const bands: BandLayout[] = [];
  if (refs.size === 0) {
    ids.forEach((_, i) => {
      below[i] = i + 1 < ids.length ? i + 1 : undefined;
    });
    return { bands, columnOf, main: ids.map((_, i) => i), below, bandOf };
  }
  const index = new Map(ids.map((id, i) => [id, i]));
  const columnKey = new Map<string, { band: number; column: number }>();
  for (const fork of manifest.forks ?? []) {
    const card = index.get(fork.path);
    // A parallel node inside a branch stays in that branch's column.
    if (card === undefined || fork.branches.length === 0 || enclosingBranches(fork.path, refs).length > 0)
      continue;
    bandOf.set(card, bands.length);
    fork.branches.forEach((branch, column) => {
      columnKey.set(`${fork.path}/${branch.name}/`, { band: bands.length, column });
    });
    bands.push({
      fork: card,
      columns: fork.branches.map((branch) => ({
        name: branch.name,
        title: branch.title,
        label: branchLabel(fork, branch),
        cards: [],
      })),
      splitRow: 0,
      mergeRow: 0,
      next: undefined,
      label: undefined,
    });
  }
  const main: number[] = [];
  ids.forEach((id, i) => {
    const outer = enclosingBranches(id, refs)[0];
    const at = outer === undefined ? undefined : columnKey.get(outer.prefix);
    if (at === undefined) {
      main.push(i);
      return;
    }
    columnOf[i] = at;
    bands[at.band]?.columns[at.column]?.cards.push(i);
  });
  const link = (stack: readonly number[]) => {
    stack.forEach((card, k) => {
      below[card] = stack[k + 1];
    });
  };
  link(main);
  for (const band of bands) for (const column of band.columns) link(column.cards);
  return { bands, columnOf, main, below, bandOf };
}
