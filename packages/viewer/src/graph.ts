import { visibleWidth } from "@earendil-works/pi-tui";
import { joinEnds, type NodeView, type RunView } from "@piw/protocol";
import { Canvas } from "./canvas.js";
import { detectGlyphs, type Glyphs } from "./glyphs.js";
import {
  CARD_DETAIL_ROW,
  type CardLayout,
  type EdgeLayout,
  type GraphLayout,
  layoutGraph,
} from "./graph-layout.js";
import {
  type BandGeometry,
  type BandRun,
  type Box,
  bandGeometry,
  bandNeed,
  drawBand,
} from "./graph-bands.js";
import { type CardText, cardText, columnsOf } from "./graph-cards.js";
import { agentProgressOf, nodeProgressOf } from "./progress-words.js";
import { clipToWidth, textWidth } from "./text-width.js";
import { plainTheme, type Theme, type Tint } from "./theme.js";

export interface GraphOptions {
  /** Columns available; cards shrink to fit, down to a minimum. */
  width: number;
  /** Only these rows are drawn and returned (a screen's slice); default the whole graph. */
  rows?: { top: number; height: number };
  /** The card drawn with a heavy border: the selected or active node. */
  highlight?: string | null;
  now?: number;
  theme?: Theme;
  /** The symbols to draw with; default what this terminal can show. */
  glyphs?: Glyphs;
}

export interface RenderedGraph {
  /** The drawn rows: the whole graph, or the `rows` asked for. */
  lines: string[];
  /** Rows of the whole graph. */
  height: number;
  /** Where each drawn card sits: for scrolling a card into view, and for the mouse to find it. */
  cards: { id: string; top: number; height: number; left: number; width: number }[];
}

const MIN_CARD_WIDTH = 12;
const MAX_CARD_WIDTH = 48;

/** Puts a line cell, turning a line crossing another into a crossing. */
function putLine(canvas: Canvas, x: number, y: number, across: boolean, g: Glyphs, tint: Tint): void {
  const char = across ? g.horizontal : g.vertical;
  const other = across ? g.vertical : g.horizontal;
  const there = canvas.get(x, y);
  if (there === other) canvas.set(x, y, g.cross, tint);
  else canvas.set(x, y, char, tint);
}

interface Geometry {
  /** The main column's cards. */
  left: number;
  width: number;
  total: number;
  /** The main column's cards as one box. */
  main: Box;
  /** The columns between the gutters: the main cards are centred in it, bands spread across it. */
  spine: Box;
  bands: BandGeometry[];
}

function textNeed(text: CardText): number {
  let need = Math.max(textWidth(text.title) + 4, textWidth(text.status) + 4);
  if (text.banner !== undefined) need = Math.max(need, textWidth(text.banner) + 6);
  return need;
}

function geometry(
  layout: GraphLayout,
  texts: CardText[],
  labels: Map<number, string>,
  width: number,
  run: BandRun,
): Geometry {
  const left = layout.leftLanes > 0 ? 2 * layout.leftLanes + 1 : 0;
  const right = layout.rightLanes > 0 ? 2 * layout.rightLanes + 1 : 0;
  let need = MIN_CARD_WIDTH;
  texts.forEach((text, i) => {
    if (layout.columnOf[i] === undefined) need = Math.max(need, textNeed(text));
  });
  for (const label of labels.values()) need = Math.max(need, visibleWidth(label) + 4);
  const room = width - left - right;
  const cardWidth = Math.max(MIN_CARD_WIDTH, Math.min(need, MAX_CARD_WIDTH, room));
  const columnNeed = (card: number) => textNeed(texts[card] as CardText);
  let bandWidth = 0;
  for (const band of layout.bands) bandWidth = Math.max(bandWidth, bandNeed(band, columnNeed));
  const spineWidth = Math.max(cardWidth, Math.min(bandWidth, room));
  const spine = { x: left, width: spineWidth };
  const bands = layout.bands.map((band) => bandGeometry(band, spine, columnNeed, layout.cards, run));
  const mainLeft = left + Math.floor((spineWidth - cardWidth) / 2);
  return {
    left: mainLeft,
    width: cardWidth,
    main: { x: mainLeft, width: cardWidth },
    total: left + spineWidth + right,
    spine,
    bands,
  };
}

/** Where a card is drawn: the main column, or its branch's column; undefined when its column is left out. */
function boxOf(layout: GraphLayout, at: Geometry, card: number): Box | undefined {
  const column = layout.columnOf[card];
  if (column === undefined) return at.main;
  return at.bands[column.band]?.boxes.get(column.column);
}

function drawCard(
  canvas: Canvas,
  card: CardLayout,
  text: CardText,
  at: Box,
  heavy: boolean,
  g: Glyphs,
): void {
  const box = heavy ? g.heavy : g.light;
  const tint: Tint = heavy ? "bold" : text.tint;
  const x0 = at.x;
  const x1 = at.x + at.width - 1;
  const y0 = card.top;
  const y1 = card.top + card.height - 1;
  canvas.set(x0, y0, box.tl, tint);
  canvas.set(x1, y0, box.tr, tint);
  canvas.set(x0, y1, box.bl, tint);
  canvas.set(x1, y1, box.br, tint);
  for (let x = x0 + 1; x < x1; x += 1) {
    canvas.set(x, y0, box.h, tint);
    canvas.set(x, y1, box.h, tint);
  }
  for (let y = y0 + 1; y < y1; y += 1) {
    canvas.set(x0, y, box.v, tint);
    canvas.set(x1, y, box.v, tint);
  }
  const inner = at.width - 4;
  if (text.banner !== undefined && at.width > 6)
    canvas.text(x0 + 2, y0, ` ${text.banner} `, at.width - 4, "dim");
  canvas.text(x0 + 2, y0 + 1, text.title, inner, heavy ? "bold" : undefined);
  canvas.text(x0 + 2, y0 + 2, text.fitStatus(inner), inner, text.tint);
  if (text.detail !== undefined && card.height > CARD_DETAIL_ROW + 1)
    canvas.text(x0 + 2, y0 + CARD_DETAIL_ROW, text.detail(inner), inner, "cyan");
}

function drawEdge(
  canvas: Canvas,
  edge: EdgeLayout,
  layout: GraphLayout,
  at: Geometry,
  heavy: Set<number>,
  taken: boolean,
  g: Glyphs,
): void {
  const from = layout.cards[edge.from] as CardLayout;
  const x0 = at.left;
  const x1 = at.left + at.width - 1;
  // Gutter lanes run outside the spine, clear of every band's columns.
  const spineLeft = at.spine.x;
  const spineRight = at.spine.x + at.spine.width - 1;
  const route = edge.route;
  // The path the run took stands out; an edge it never took stays dim, with a hollow arrowhead.
  const tint: Tint = taken ? "bold" : "dim";
  const arrows = taken ? g.arrows : g.untakenArrows;
  switch (route.kind) {
    case "join":
      // Drawn with its band, from where the branches meet.
      return;
    case "main": {
      const box = boxOf(layout, at, edge.from);
      if (box === undefined || boxOf(layout, at, edge.to) === undefined) return;
      const x = box.x + Math.floor(box.width / 2);
      const x1 = box.x + box.width - 1;
      const bottom = from.top + from.height - 1;
      const thick = heavy.has(edge.from);
      canvas.set(x, bottom, thick ? g.heavy.down : g.light.down, thick ? "bold" : "dim");
      canvas.set(x, bottom + 1, g.vertical, tint);
      canvas.set(x, bottom + 2, arrows.down, tint);
      if (edge.label !== undefined) canvas.text(x + 2, bottom + 1, edge.label, x1 - x - 2, "yellow");
      return;
    }
    case "right": {
      const lane = spineRight + 2 + 2 * route.lane;
      for (let x = x1 + 1; x < lane; x += 1) putLine(canvas, x, route.fromRow, true, g, tint);
      canvas.set(lane, route.fromRow, g.corners.tr, tint);
      for (let y = route.fromRow + 1; y < route.toRow; y += 1) putLine(canvas, lane, y, false, g, tint);
      canvas.set(lane, route.toRow, g.corners.br, tint);
      for (let x = lane - 1; x > x1 + 1; x -= 1) putLine(canvas, x, route.toRow, true, g, tint);
      canvas.set(x1 + 1, route.toRow, arrows.left, tint);
      if (edge.label !== undefined) {
        const room = at.width - 4;
        const label = clipToWidth(edge.label, room, g.ellipsis);
        canvas.text(x1 - 1 - visibleWidth(label), route.fromRow, label, room, "yellow");
      }
      return;
    }
    case "left": {
      const lane = spineLeft - 2 - 2 * route.lane;
      for (let x = x0 - 1; x > lane; x -= 1) putLine(canvas, x, route.fromRow, true, g, tint);
      canvas.set(lane, route.fromRow, g.corners.bl, tint);
      for (let y = route.fromRow - 1; y > route.toRow; y -= 1) putLine(canvas, lane, y, false, g, tint);
      canvas.set(lane, route.toRow, g.corners.tl, tint);
      for (let x = lane + 1; x < x0 - 1; x += 1) putLine(canvas, x, route.toRow, true, g, tint);
      canvas.set(x0 - 1, route.toRow, arrows.right, tint);
      if (edge.label !== undefined) canvas.text(x0 + 2, route.fromRow, edge.label, at.width - 4, "yellow");
      return;
    }
    default:
      route satisfies never;
  }
}

/**
 * Whether the run went along an edge: both ends were visited, or it reached the exit from a visited
 * node. The view keeps no per-edge record, so an edge between two visited nodes counts as taken.
 */
function edgeTaken(
  edge: EdgeLayout,
  cards: CardLayout[],
  view: RunView,
  nodes: Map<string, NodeView>,
): boolean {
  const from = cards[edge.from];
  const to = cards[edge.to];
  if (from === undefined || to === undefined) return false;
  if ((nodes.get(from.id)?.visits ?? 0) === 0) return false;
  if (to.kind === "exit") return view.status === "done" && view.outcome === "completed";
  return (nodes.get(to.id)?.visits ?? 0) > 0;
}

function measure(
  graph: GraphLayout,
  view: RunView,
  nodes: Map<string, NodeView>,
  g: Glyphs,
  now: number | undefined,
): { texts: CardText[]; labels: Map<number, string> } {
  const columns = columnsOf(graph);
  const texts = graph.cards.map((card, i) => cardText(card, view, nodes, g, now, columns[i]));
  const labels = new Map<number, string>();
  graph.edges.forEach((edge, i) => {
    if (edge.label !== undefined && edge.route.kind !== "main") labels.set(i, edge.label);
  });
  return { texts, labels };
}

/** The run's graph laid out, with a detail row on each running card that reports progress. */
export function graphLayoutOf(view: RunView): GraphLayout {
  const tall = new Set<string>();
  for (const node of view.nodes)
    if (nodeProgressOf(view, node) !== undefined || agentProgressOf(view, node) !== undefined)
      tall.add(node.path);
  return layoutGraph(view.manifest, view.nodes, tall);
}

/** Columns the graph takes when it has all it wants: cards as wide as their text, and the lanes. */
export function naturalGraphWidth(
  view: RunView,
  options: Omit<GraphOptions, "width">,
  layout?: GraphLayout,
): number {
  const graph = layout ?? graphLayoutOf(view);
  const nodes = new Map(view.nodes.map((node) => [node.path, node]));
  const { texts, labels } = measure(graph, view, nodes, options.glyphs ?? detectGlyphs(), options.now);
  const run = { nodes, ends: joinEnds(view.manifest) };
  return geometry(graph, texts, labels, Number.POSITIVE_INFINITY, run).total;
}

/**
 * The run's graph as boxed cards joined by edges: the whole graph, top to bottom. The caller shows
 * the slice that fits its screen; `cards` says where each card is.
 */
export function renderGraph(view: RunView, options: GraphOptions, layout?: GraphLayout): RenderedGraph {
  const graph = layout ?? graphLayoutOf(view);
  const nodes = new Map(view.nodes.map((node) => [node.path, node]));
  const g = options.glyphs ?? detectGlyphs();
  const { texts, labels } = measure(graph, view, nodes, g, options.now);
  const run = { nodes, ends: joinEnds(view.manifest) };
  const at = geometry(graph, texts, labels, options.width, run);
  const top = Math.max(0, Math.min(options.rows?.top ?? 0, graph.height));
  const rows = Math.max(0, Math.min(options.rows?.height ?? graph.height, graph.height - top));
  const canvas = new Canvas(at.total, rows, top, g.ellipsis);
  const heavy = new Set<number>();
  graph.cards.forEach((card, i) => {
    if (card.id === options.highlight) heavy.add(i);
  });
  graph.cards.forEach((card, i) => {
    const box = boxOf(graph, at, i);
    if (box !== undefined && card.top + card.height > top && card.top < top + rows)
      drawCard(canvas, card, texts[i] as CardText, box, heavy.has(i), g);
  });
  for (const edge of graph.edges) {
    drawEdge(canvas, edge, graph, at, heavy, edgeTaken(edge, graph.cards, view, nodes), g);
  }
  graph.bands.forEach((band, i) => {
    const bandAt = at.bands[i];
    if (bandAt === undefined || band.splitRow > top + rows || band.mergeRow + 1 < top) return;
    drawBand(
      canvas,
      {
        band,
        at: bandAt,
        cards: graph.cards,
        forkBox: at.main,
        nextBox: band.next === undefined ? undefined : boxOf(graph, at, band.next),
        run,
        heavyFork: heavy.has(band.fork),
      },
      g,
    );
  });
  return {
    lines: canvas.lines(options.theme ?? plainTheme),
    height: graph.height,
    cards: graph.cards.flatMap((card, i) => {
      const box = boxOf(graph, at, i);
      return box === undefined
        ? []
        : [{ id: card.id, top: card.top, height: card.height, left: box.x, width: box.width }];
    }),
  };
}
