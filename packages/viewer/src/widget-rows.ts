import type { NodeView, RunView } from "@piw/protocol";
import { type FlowEntry, flowEntries } from "./flow.js";
import { type BranchView, branchCounts, branchesToShow } from "./forks.js";

/** The most branches of one parallel node the widget gives a line each; the rest share one line. */
const WIDGET_BRANCH_LINES = 4;

/**
 * One line of the Pi widget: a node, an include, one branch of a parallel node (standing for every
 * node inside it), or the line that counts the branches left out.
 */
export type WidgetRow =
  | Extract<FlowEntry, { kind: "node" | "mount" }>
  | { kind: "branch"; branch: BranchView; depth: number; last: boolean }
  | { kind: "more"; hidden: BranchView[]; depth: number };

/**
 * The widget's rows in flow order. A parallel node's branches are one row each, with no row for
 * the nodes inside them; past WIDGET_BRANCH_LINES branches, the running and failed ones keep their
 * rows and one row counts the rest.
 */
export function widgetRows(view: Pick<RunView, "manifest" | "nodes">): WidgetRow[] {
  const rows: WidgetRow[] = [];
  let inside: string | undefined;
  let group: Array<Extract<FlowEntry, { kind: "branch" }>> = [];
  const flush = () => {
    if (group.length === 0) return;
    const shown =
      group.length > WIDGET_BRANCH_LINES
        ? branchesToShow(
            group.map((entry) => entry.branch),
            WIDGET_BRANCH_LINES - 1,
          )
        : group.map((entry) => entry.branch);
    const depth = group[0]?.depth ?? 0;
    const hidden = group.map((entry) => entry.branch).filter((branch) => !shown.includes(branch));
    shown.forEach((branch, i) => {
      rows.push({ kind: "branch", branch, depth, last: i === shown.length - 1 && hidden.length === 0 });
    });
    if (hidden.length > 0) rows.push({ kind: "more", hidden, depth });
    group = [];
  };
  for (const entry of flowEntries(view)) {
    const path = entry.kind === "node" ? entry.node.path : entry.kind === "mount" ? entry.mount.path : "";
    // Everything inside a branch is on the branch's row.
    if (inside !== undefined && (entry.kind === "branch" ? entry.branch.forkPath : path).startsWith(inside))
      continue;
    inside = undefined;
    if (entry.kind === "branch") {
      if (group.length > 0 && group[0]?.branch.forkPath !== entry.branch.forkPath) flush();
      group.push(entry);
      inside = `${entry.branch.forkPath}/${entry.branch.name}/`;
      continue;
    }
    flush();
    rows.push(entry);
  }
  flush();
  return rows;
}

/** Whether the row stands for the node at `path`: the node itself, or the branch it runs in. */
export function rowHolds(row: WidgetRow, path: string | null): boolean {
  if (path === null) return false;
  switch (row.kind) {
    case "node":
      return row.node.path === path;
    case "mount":
      return row.mount.path === path;
    case "branch":
      return path.startsWith(`${row.branch.forkPath}/${row.branch.name}/`);
    case "more":
      return row.hidden.some((branch) => path.startsWith(`${branch.forkPath}/${branch.name}/`));
    default:
      return row satisfies never;
  }
}

/** The node a branch row shows: the one running in it, else the last one it visited. */
export function branchFace(branch: BranchView): NodeView | undefined {
  if (branch.running[0] !== undefined) return branch.running[0];
  let latest: NodeView | undefined;
  for (const node of branch.nodes)
    if (node.startedAt !== null && (latest === undefined || node.startedAt >= (latest.startedAt ?? 0)))
      latest = node;
  return latest;
}

export function moreWords(row: Extract<WidgetRow, { kind: "more" }>): string {
  return `+${row.hidden.length} more branches: ${branchCounts(row.hidden)}`;
}
