import type { GraphManifest, NodeView } from "@piw/protocol";
import { type BandLayout, type Stacks, stackCards } from "./band-layout.js";
import { flowOrder } from "./flow.js";

/**
 * The graph as a column of cards, top to bottom in flow order, with exits last. An edge to the next
 * card runs straight down between them ("main"); any other edge forward runs through the right
 * gutter, and every edge back (a loop) through the left gutter, each in a lane of its own.
 */
export interface GraphLayout {
  cards: CardLayout[];
  edges: EdgeLayout[];
  /** Parallel nodes' branches, side by side. */
  bands: BandLayout[];
  /** The band and column of each card inside a branch; undefined for the main column's cards. */
  columnOf: Stacks["columnOf"];
  leftLanes: number;
  rightLanes: number;
  /** Rows of the whole graph. */
  height: number;
}

export interface CardLayout {
  /** A node path, or `exit:<name>`. */
  id: string;
  kind: "node" | "exit";
  top: number;
  height: number;
}

/**
 * `main` runs straight down to the next card of the same column; `join` runs from where a band's
 * columns meet to the card after it; the others through a gutter lane.
 */
type EdgeRoute =
  | { kind: "main" }
  | { kind: "join"; band: number }
  | { kind: "right" | "left"; lane: number; fromRow: number; toRow: number };

export interface EdgeLayout {
  from: number;
  to: number;
  label: string | undefined;
  route: EdgeRoute;
}

/** Rows between two cards: one for the line (and its label), one for the arrowhead. */
const CARD_GAP = 2;
/** A card's two content rows: title, then state. */
const CARD_CONTENT_ROWS = 2;
/** Where a tall card's third content row (a running node's progress) sits, from its top border. */
export const CARD_DETAIL_ROW = 3;

function exitCardId(exit: string): string {
  return `exit:${exit}`;
}

/** Assigns each span the lowest lane free over its rows; spans are `[low, high]` row ranges. */
function assignLanes(spans: { low: number; high: number }[]): { lanes: number[]; count: number } {
  const order = spans.map((_, i) => i).sort((a, b) => (spans[a]?.low ?? 0) - (spans[b]?.low ?? 0));
  const laneEnds: number[] = [];
  const lanes = new Array<number>(spans.length).fill(0);
  for (const i of order) {
    const span = spans[i] as { low: number; high: number };
    let lane = laneEnds.findIndex((end) => end < span.low);
    if (lane < 0) {
      lane = laneEnds.length;
      laneEnds.push(span.high);
    } else {
      laneEnds[lane] = span.high;
    }
    lanes[i] = lane;
  }
  return { lanes, count: laneEnds.length };
}

/** `tall`: node cards that get a third content row (a running node's progress). */
export function layoutGraph(
  manifest: GraphManifest,
  nodes: readonly NodeView[],
  tall: ReadonlySet<string> = new Set(),
): GraphLayout {
  const ids = flowOrder(manifest, nodes);
  const exits = [...manifest.exits];
  for (const edge of manifest.edges) {
    if (edge.to.kind === "exit" && !exits.includes(edge.to.exit)) exits.push(edge.to.exit);
  }
  const nodeCount = ids.length;
  ids.push(...exits.map(exitCardId));
  const index = new Map(ids.map((id, i) => [id, i]));

  const stacks = stackCards(manifest, ids);
  type Pending = {
    from: number;
    to: number;
    label: string | undefined;
    side: "main" | "join" | "right" | "left";
  };
  const pending: Pending[] = [];
  const mainTaken = new Set<number>();
  for (const edge of manifest.edges) {
    // A branch's edge into its join is drawn with its band, not as an edge of its own.
    if (edge.to.kind === "join") continue;
    const from = index.get(edge.from);
    const to = index.get(edge.to.kind === "node" ? edge.to.path : exitCardId(edge.to.exit));
    if (from === undefined || to === undefined) continue;
    const straight = to === stacks.below[from] && !mainTaken.has(from);
    const band = stacks.bandOf.get(from);
    if (stacks.columnOf[from] !== undefined || stacks.columnOf[to] !== undefined) {
      // Inside a branch only the edge to the next card of the column is drawn; gutters are the
      // main column's.
      if (straight && stacks.columnOf[from]?.band === stacks.columnOf[to]?.band) {
        mainTaken.add(from);
        pending.push({ from, to, label: edge.label, side: "main" });
      }
      continue;
    }
    let side: Pending["side"];
    if (straight) {
      mainTaken.add(from);
      side = band === undefined ? "main" : "join";
    } else {
      side = to > from ? "right" : "left";
    }
    pending.push({ from, to, label: edge.label, side });
  }

  // Ports: each gutter edge gets its own row on each card it touches. On the left, arrivals sit
  // above departures so a loop onto its own card still runs upwards.
  const leftIn = ids.map(() => [] as number[]);
  const leftOut = ids.map(() => [] as number[]);
  const right = ids.map(() => [] as number[]);
  pending.forEach((edge, i) => {
    if (edge.side === "left") {
      leftIn[edge.to]?.push(i);
      leftOut[edge.from]?.push(i);
    } else if (edge.side === "right") {
      right[edge.from]?.push(i);
      right[edge.to]?.push(i);
    }
  });
  // Rows on a card's side: arrivals, then unlabeled departures; labeled departures of both sides
  // share the rows below the content, one each, where the label has room. A loop onto its own
  // card thus still runs upwards.
  interface SideSlots {
    arrive: Map<number, number>;
    depart: Map<number, number>;
  }
  const leftSlots: SideSlots[] = [];
  const rightSlots: SideSlots[] = [];
  const cardRows: number[] = [];
  ids.forEach((_, card) => {
    const sides = [
      { arrivals: leftIn[card] ?? [], departures: leftOut[card] ?? [] },
      {
        arrivals: (right[card] ?? []).filter((e) => pending[e]?.to === card),
        departures: (right[card] ?? []).filter((e) => pending[e]?.from === card),
      },
    ].map(({ arrivals, departures }) => {
      const slots: SideSlots = { arrive: new Map(), depart: new Map() };
      arrivals.forEach((edge, k) => {
        slots.arrive.set(edge, k);
      });
      let next = arrivals.length;
      for (const edge of departures) if (pending[edge]?.label === undefined) slots.depart.set(edge, next++);
      return { slots, used: next, labeled: departures.filter((e) => pending[e]?.label !== undefined) };
    });
    const content = tall.has(ids[card] as string) ? CARD_CONTENT_ROWS + 1 : CARD_CONTENT_ROWS;
    let next = Math.max(content, ...sides.map((side) => side.used));
    for (const side of sides) for (const edge of side.labeled) side.slots.depart.set(edge, next++);
    leftSlots.push((sides[0] as { slots: SideSlots }).slots);
    rightSlots.push((sides[1] as { slots: SideSlots }).slots);
    cardRows.push(next);
  });
  const cards: CardLayout[] = ids.map((id, i) => ({
    id,
    kind: i < nodeCount ? "node" : "exit",
    top: 0,
    height: (cardRows[i] ?? CARD_CONTENT_ROWS) + 2,
  }));
  let top = 0;
  for (const i of stacks.main) {
    const card = cards[i] as CardLayout;
    card.top = top;
    top += card.height + CARD_GAP;
    const band = stacks.bands[stacks.bandOf.get(i) ?? -1];
    if (band === undefined) continue;
    // The split line and the arrowheads take the gap under the fork; the columns start below.
    band.splitRow = top - CARD_GAP;
    let end = top;
    for (const column of band.columns) {
      let at = top;
      for (const k of column.cards) {
        const inner = cards[k] as CardLayout;
        inner.top = at;
        at += inner.height + CARD_GAP;
      }
      end = Math.max(end, column.cards.length === 0 ? top : at - CARD_GAP);
    }
    band.mergeRow = end;
    top = end + CARD_GAP;
  }
  const height = Math.max(0, top - CARD_GAP);

  const portRow = (card: number, slot: number) => (cards[card]?.top ?? 0) + 1 + slot;
  const rows = pending.map((edge, i) => {
    if (edge.side === "left" || edge.side === "right") {
      const slots = edge.side === "left" ? leftSlots : rightSlots;
      return {
        fromRow: portRow(edge.from, slots[edge.from]?.depart.get(i) ?? 0),
        toRow: portRow(edge.to, slots[edge.to]?.arrive.get(i) ?? 0),
      };
    }
    return { fromRow: 0, toRow: 0 };
  });
  const spansOf = (side: "left" | "right") =>
    pending.flatMap((edge, i) => {
      if (edge.side !== side) return [];
      const row = rows[i] as { fromRow: number; toRow: number };
      return [{ i, low: Math.min(row.fromRow, row.toRow), high: Math.max(row.fromRow, row.toRow) }];
    });
  const laneOf = new Map<number, number>();
  const counts = { left: 0, right: 0 };
  for (const side of ["left", "right"] as const) {
    const spans = spansOf(side);
    const { lanes, count } = assignLanes(spans);
    spans.forEach((span, k) => {
      laneOf.set(span.i, lanes[k] ?? 0);
    });
    counts[side] = count;
  }

  const edges: EdgeLayout[] = pending.map((edge, i) => {
    const row = rows[i] as { fromRow: number; toRow: number };
    let route: EdgeRoute;
    if (edge.side === "main") route = { kind: "main" };
    else if (edge.side === "join") {
      const band = stacks.bandOf.get(edge.from) ?? 0;
      const drawn = stacks.bands[band];
      if (drawn !== undefined) {
        drawn.next = edge.to;
        drawn.label = edge.label;
      }
      route = { kind: "join", band };
    } else route = { kind: edge.side, lane: laneOf.get(i) ?? 0, fromRow: row.fromRow, toRow: row.toRow };
    return { from: edge.from, to: edge.to, label: edge.label, route };
  });
  return {
    cards,
    edges,
    bands: stacks.bands,
    columnOf: stacks.columnOf,
    leftLanes: counts.left,
    rightLanes: counts.right,
    height,
  };
}
