import type { NodeView, RunView } from "@piw/protocol";
import { enclosingMounts } from "./flow.js";
import { formatDuration } from "./format.js";
import type { Glyphs } from "./glyphs.js";
import type { CardLayout, GraphLayout } from "./graph-layout.js";
import { agentProgressOf, nodeProgressOf, runningDetail } from "./progress-words.js";
import { textWidth } from "./text-width.js";
import type { Tint } from "./theme.js";
import { NODE_STATE_WORDS, NODE_TINTS } from "./words.js";

// What each card of the graph says: its title, its state line, its banner and a running node's
// progress. graph.ts decides where the cards go and draws them.

/** Columns of the progress bar on a running card. */
const CARD_BAR_CELLS = 8;

export interface CardText {
  title: string;
  /** The whole state line, as the card would show it with room enough. */
  status: string;
  /** The state line for a card `inner` columns wide: its least useful parts dropped first. */
  fitStatus: (inner: number) => string;
  /**
   * A running node's progress and agent activity on a third row, for a card `inner` columns wide;
   * clipped, never widening the card.
   */
  detail: ((inner: number) => string) | undefined;
  /** Text on the top border: the include a node sits in. */
  banner: string | undefined;
  tint: Tint;
}

/** One word of a card's state line, and how much it matters: a narrow card drops the least first. */
interface StatusPart {
  text: string;
  worth: number;
}

function statusParts(node: NodeView, now: number | undefined, g: Glyphs): StatusPart[] {
  const parts: StatusPart[] = [{ text: `${g.node[node.state]} ${NODE_STATE_WORDS[node.state]}`, worth: 100 }];
  if (node.visits > 0) parts.push({ text: `#${node.visits}`, worth: node.visits > 1 ? 30 : 10 });
  if (node.attempt > 1) parts.push({ text: `try ${node.attempt}`, worth: 60 });
  if (node.state === "running" && now !== undefined && node.startedAt !== null) {
    parts.push({ text: formatDuration(now - node.startedAt), worth: 40 });
  } else if (node.startedAt !== null && node.finishedAt !== null) {
    parts.push({ text: formatDuration(node.finishedAt - node.startedAt), worth: 20 });
  }
  if (node.errorCode !== null && node.state !== "succeeded") parts.push({ text: node.errorCode, worth: 80 });
  return parts;
}

const joined = (parts: readonly StatusPart[]) => parts.map((part) => part.text).join(" ");

/** The parts that fit `inner` columns, in their order, dropping the least worth first. */
function fitParts(parts: readonly StatusPart[], inner: number): string {
  let shown = [...parts];
  while (shown.length > 1 && textWidth(joined(shown)) > inner) {
    const least = shown.slice(1).reduce((a, b) => (b.worth < a.worth ? b : a));
    shown = shown.filter((part) => part !== least);
  }
  return joined(shown);
}

/** A card in a branch column: the branch's path prefix, and whether it is the column's first card. */
export interface InColumn {
  prefix: string;
  name: string;
  label: string;
  first: boolean;
}

export function cardText(
  card: CardLayout,
  view: RunView,
  nodes: Map<string, NodeView>,
  g: Glyphs,
  now?: number,
  column?: InColumn,
): CardText {
  if (card.kind === "exit") {
    const exit = card.id.slice("exit:".length);
    const reached = view.status === "done" && view.outcome === "completed";
    return {
      title: `${g.exit} ${exit}`,
      status: reached ? "exit, reached" : "exit",
      fitStatus: () => (reached ? "exit, reached" : "exit"),
      detail: undefined,
      banner: undefined,
      tint: "dim",
    };
  }
  const node = nodes.get(card.id);
  const mount = enclosingMounts(card.id, view.manifest.mounts).at(-1);
  // A branch's first card names the branch; inside a column a card is named from the branch down.
  let banner = mount === undefined ? undefined : `${g.kind.include} ${mount.path} (${mount.workflow})`;
  if (column?.first) banner = column.label;
  const name = column === undefined ? card.id : card.id.slice(column.prefix.length);
  if (node === undefined)
    return { title: name, status: "", fitStatus: () => "", detail: undefined, banner, tint: "dim" };
  const running = nodeProgressOf(view, node) !== undefined || agentProgressOf(view, node) !== undefined;
  // The bar only where it leaves room for the count, the estimate and some of the message.
  const detail = running
    ? (inner: number) =>
        runningDetail(view, node, { now, glyphs: g, bar: inner >= 34 ? CARD_BAR_CELLS : 0, compact: true })
    : undefined;
  const parts = statusParts(node, now, g);
  const status = joined(parts);
  // Most cards have room for the whole line: measured once, and only a narrow card is refitted.
  let width: number | undefined;
  return {
    title: `${g.kind[node.kind]} ${name}`,
    status,
    fitStatus: (inner) => {
      width ??= textWidth(status);
      return width <= inner ? status : fitParts(parts, inner);
    },
    detail,
    banner,
    tint: NODE_TINTS[node.state],
  };
}

/** Each card's branch column, as its text needs it. */
export function columnsOf(graph: GraphLayout): Array<InColumn | undefined> {
  return graph.columnOf.map((at, card) => {
    if (at === undefined) return undefined;
    const band = graph.bands[at.band];
    const column = band?.columns[at.column];
    const fork = graph.cards[band?.fork ?? -1];
    if (column === undefined || fork === undefined) return undefined;
    const prefix = `${fork.id}/${column.name}/`;
    return { prefix, name: column.name, label: column.label, first: column.cards[0] === card };
  });
}
