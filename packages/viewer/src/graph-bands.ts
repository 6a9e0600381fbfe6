import { branchState, type NodeView } from "@piw/protocol";
import type { BandLayout } from "./band-layout.js";
import type { Canvas } from "./canvas.js";
import { branchCounts, branchesToShow } from "./forks.js";
import type { Glyphs } from "./glyphs.js";
import type { CardLayout } from "./graph-layout.js";
import type { Tint } from "./theme.js";
import type { NodeState } from "./words.js";

/** Columns a card takes: its left border's column and its width. */
export interface Box {
  x: number;
  width: number;
}

/** Where a band's columns are drawn; branches that did not fit share the `more` box. */
export interface BandGeometry {
  boxes: Map<number, Box>;
  more: { box: Box; hidden: number[] } | undefined;
}

const MIN_COLUMN_WIDTH = 12;
const MAX_COLUMN_WIDTH = 36;
/** Rows the `more` box takes: its border and two lines. */
const MORE_BOX_HEIGHT = 4;
/** Blank columns between two branch columns. */
const COLUMN_GAP = 1;

/** Columns a band wants: its widest column's need, for every branch. */
export function bandNeed(band: BandLayout, need: (card: number) => number): number {
  let widest = MIN_COLUMN_WIDTH;
  for (const column of band.columns) for (const card of column.cards) widest = Math.max(widest, need(card));
  const each = Math.min(MAX_COLUMN_WIDTH, widest);
  return band.columns.length * each + (band.columns.length - 1) * COLUMN_GAP;
}

/** What the band's lines need to know of the run: its nodes, and which of them end a branch. */
export interface BandRun {
  nodes: Map<string, NodeView>;
  ends: ReadonlySet<string>;
}

/** A branch's state from its cards' nodes and its fork's. */
function columnState(
  cards: readonly number[],
  band: BandLayout,
  ids: readonly CardLayout[],
  run: BandRun,
): NodeState {
  const inside: NodeView[] = [];
  for (const card of cards) {
    const node = run.nodes.get(ids[card]?.id ?? "");
    if (node !== undefined) inside.push(node);
  }
  return branchState(inside, run.nodes.get(ids[band.fork]?.id ?? ""), run.ends);
}

/**
 * Lays a band's columns out across `spine`: as many as fit at MIN_COLUMN_WIDTH, equal widths, the
 * whole band centred. When not all fit, the running and failed branches keep a column and the last
 * column is a box that counts the others.
 */
export function bandGeometry(
  band: BandLayout,
  spine: Box,
  need: (card: number) => number,
  cards: readonly CardLayout[],
  run: BandRun,
): BandGeometry {
  const count = band.columns.length;
  const fit = Math.max(1, Math.floor((spine.width + COLUMN_GAP) / (MIN_COLUMN_WIDTH + COLUMN_GAP)));
  const states = band.columns.map((column, i) => ({ i, state: columnState(column.cards, band, cards, run) }));
  const shown = count <= fit ? states : branchesToShow(states, Math.max(0, fit - 1));
  const hidden = states.filter((entry) => !shown.includes(entry)).map((entry) => entry.i);
  const slots = shown.length + (hidden.length > 0 ? 1 : 0);
  let widest = MIN_COLUMN_WIDTH;
  for (const { i } of shown)
    for (const card of band.columns[i]?.cards ?? []) widest = Math.max(widest, need(card));
  const room = Math.floor((spine.width - (slots - 1) * COLUMN_GAP) / slots);
  const width = Math.max(4, Math.min(MAX_COLUMN_WIDTH, widest, room));
  const total = slots * width + (slots - 1) * COLUMN_GAP;
  const left = spine.x + Math.max(0, Math.floor((spine.width - total) / 2));
  const boxes = new Map<number, Box>();
  shown.forEach(({ i }, slot) => {
    boxes.set(i, { x: left + slot * (width + COLUMN_GAP), width });
  });
  const more =
    hidden.length === 0
      ? undefined
      : { box: { x: left + shown.length * (width + COLUMN_GAP), width }, hidden };
  return { boxes, more };
}

/** The box-drawing character joining lines that leave a cell up, down, left and right. */
function junction(up: boolean, down: boolean, left: boolean, right: boolean, g: Glyphs): string {
  if (left && right) {
    if (up && down) return g.cross;
    if (up) return g.junctions.up;
    if (down) return g.light.down;
    return g.horizontal;
  }
  if (up && down) return left ? g.junctions.left : right ? g.junctions.right : g.vertical;
  if (down) return right ? g.corners.tl : left ? g.corners.tr : g.vertical;
  if (up) return right ? g.corners.bl : left ? g.corners.br : g.vertical;
  return g.horizontal;
}

/** A horizontal line on `row` through the given columns, with each meeting drawn as a junction. */
function drawBar(
  canvas: Canvas,
  row: number,
  ups: readonly number[],
  downs: readonly number[],
  tint: Tint,
  g: Glyphs,
): void {
  const all = [...ups, ...downs];
  if (all.length === 0) return;
  const low = Math.min(...all);
  const high = Math.max(...all);
  for (let x = low; x <= high; x += 1) {
    const char = junction(ups.includes(x), downs.includes(x), x > low, x < high, g);
    canvas.set(x, row, char, tint);
  }
}

const centre = (box: Box) => box.x + Math.floor(box.width / 2);

/** `x`, or a column's centre one cell from it: the line then meets that column straight. */
function snap(x: number, xs: readonly number[]): number {
  return xs.find((other) => Math.abs(other - x) === 1) ?? x;
}

export interface BandDrawing {
  band: BandLayout;
  at: BandGeometry;
  cards: readonly CardLayout[];
  forkBox: Box;
  nextBox: Box | undefined;
  run: BandRun;
  heavyFork: boolean;
}

/** One column as the band's lines see it: where it is, its first card, its bottom border's row. */
interface Slot {
  x: number;
  first: number | undefined;
  /** Row of the lowest border in the column; undefined for a branch with no nodes. */
  bottom: number | undefined;
  state: NodeState;
}

/**
 * The band's lines: the split under the fork card with an arrowhead into each column, a line from
 * each column's last card down to where they meet, and the arrowhead on to the card after the join.
 * A line the run went along is bold; one it has not is dim, with a hollow arrowhead.
 */
export function drawBand(canvas: Canvas, d: BandDrawing, g: Glyphs): void {
  const { band, at, cards } = d;
  const { nodes } = d.run;
  const visited = (card: number | undefined) =>
    card !== undefined && (nodes.get(cards[card]?.id ?? "")?.visits ?? 0) > 0;
  const forkVisited = visited(band.fork);
  const fork = cards[band.fork] as CardLayout;
  const columnTop = band.splitRow + 2;
  const slots: Slot[] = [];
  for (const [i, box] of at.boxes) {
    const column = band.columns[i];
    if (column === undefined) continue;
    const last = cards[column.cards.at(-1) ?? -1];
    slots.push({
      x: centre(box),
      first: column.cards[0],
      bottom: last === undefined ? undefined : last.top + last.height - 1,
      state: columnState(column.cards, band, cards, d.run),
    });
  }
  if (at.more !== undefined)
    slots.push({
      x: centre(at.more.box),
      first: undefined,
      bottom: columnTop + MORE_BOX_HEIGHT - 1,
      state: "pending",
    });
  const xs = slots.map((slot) => slot.x);
  const forkX = snap(centre(d.forkBox), xs);

  // Split: the fork card's bottom border, the line across, an arrowhead into each column.
  const forkBottom = fork.top + fork.height - 1;
  canvas.set(forkX, forkBottom, d.heavyFork ? g.heavy.down : g.light.down, d.heavyFork ? "bold" : "dim");
  drawBar(canvas, band.splitRow, [forkX], xs, forkVisited ? "bold" : "dim", g);
  for (const slot of slots) {
    if (slot.bottom === undefined) {
      // A branch with no nodes: its line runs straight through to the join.
      for (let y = band.splitRow + 1; y < band.mergeRow; y += 1) canvas.set(slot.x, y, g.vertical, "dim");
      continue;
    }
    const taken = forkVisited && visited(slot.first);
    canvas.set(slot.x, band.splitRow + 1, (taken ? g.arrows : g.untakenArrows).down, taken ? "bold" : "dim");
  }

  // The branches that did not fit: one box that says how many and what became of them.
  if (at.more !== undefined) {
    const { box, hidden } = at.more;
    const states = hidden.map((i) => ({
      state: columnState(band.columns[i]?.cards ?? [], band, cards, d.run),
    }));
    drawMoreBox(canvas, box, columnTop, `+${hidden.length} more`, branchCounts(states), g);
  }

  // Merge: from each column's last card (or the `more` box) down to the meeting line.
  for (const slot of slots) {
    if (slot.bottom === undefined) continue;
    canvas.set(slot.x, slot.bottom, g.light.down, "dim");
    const tint: Tint = slot.state === "succeeded" ? "bold" : "dim";
    for (let y = slot.bottom + 1; y < band.mergeRow; y += 1) canvas.set(slot.x, y, g.vertical, tint);
  }
  const nextX = d.nextBox === undefined ? undefined : snap(centre(d.nextBox), xs);
  const joined = visited(band.next);
  drawBar(canvas, band.mergeRow, xs, nextX === undefined ? [] : [nextX], joined ? "bold" : "dim", g);
  if (nextX !== undefined) {
    canvas.set(nextX, band.mergeRow + 1, (joined ? g.arrows : g.untakenArrows).down, joined ? "bold" : "dim");
    const room = (d.nextBox?.x ?? 0) + (d.nextBox?.width ?? 0) - nextX - 3;
    if (band.label !== undefined && room > 0)
      canvas.text(nextX + 2, band.mergeRow + 1, band.label, room, "yellow");
  }
}

function drawMoreBox(canvas: Canvas, box: Box, top: number, title: string, status: string, g: Glyphs): void {
  const x1 = box.x + box.width - 1;
  const y1 = top + MORE_BOX_HEIGHT - 1;
  canvas.set(box.x, top, g.light.tl, "dim");
  canvas.set(x1, top, g.light.tr, "dim");
  canvas.set(box.x, y1, g.light.bl, "dim");
  canvas.set(x1, y1, g.light.br, "dim");
  for (let x = box.x + 1; x < x1; x += 1) {
    canvas.set(x, top, g.light.h, "dim");
    canvas.set(x, y1, g.light.h, "dim");
  }
  for (let y = top + 1; y < y1; y += 1) {
    canvas.set(box.x, y, g.light.v, "dim");
    canvas.set(x1, y, g.light.v, "dim");
  }
  canvas.text(box.x + 2, top + 1, title, box.width - 4, "dim");
  canvas.text(box.x + 2, top + 2, status, box.width - 4, "dim");
}
