// Re-reads a rendered graph from its box drawing alone: finds the cards, follows every line from
// its port to its arrowhead, and reports the edges it found and anything drawn out of place.

interface ParsedCard {
  id: string;
  x0: number;
  y0: number;
  x1: number;
  y1: number;
}

interface ParsedEdge {
  from: string;
  to: string;
  label: string | undefined;
}

export interface ParsedGraph {
  cards: ParsedCard[];
  edges: ParsedEdge[];
  problems: string[];
}

const TOP_LEFT = new Set(["╭", "┏"]);
const TOP_RIGHT = new Set(["╮", "┓"]);
const BOTTOM_LEFT = new Set(["╰", "┗"]);
const BOTTOM_RIGHT = new Set(["╯", "┛"]);
const VERTICAL = new Set(["│", "┃"]);
const BOTTOM = new Set(["─", "━", "┬", "┰"]);
const LINE = new Set(["─", "│", "┼", "╭", "╮", "╰", "╯", "▶", "◀", "▼", "┬", "┰"]);

/** An edge the run never took ends in a hollow arrowhead; its geometry is the same. */
const SOLID: Record<string, string> = { "▽": "▼", "◁": "◀", "▷": "▶" };

export function parseGraph(lines: readonly string[]): ParsedGraph {
  const grid = lines.map((line) => Array.from(line, (glyph) => SOLID[glyph] ?? glyph));
  const at = (x: number, y: number) => grid[y]?.[x] ?? " ";
  const problems: string[] = [];
  const cards: ParsedCard[] = [];
  const inCard = (x: number, y: number) =>
    cards.find((c) => x >= c.x0 && x <= c.x1 && y >= c.y0 && y <= c.y1);

  grid.forEach((row, y) => {
    row.forEach((char, x0) => {
      if (!TOP_LEFT.has(char)) return;
      if (inCard(x0, y)) return; // a corner glyph inside a card's text is not a card
      let x1 = x0 + 1;
      while (x1 < row.length && !TOP_RIGHT.has(row[x1] as string)) x1 += 1;
      if (x1 >= row.length) return; // the lane corner of a loop, not a card
      // A card's top border holds only border and banner text; a loop's lane crosses other lines.
      if (row.slice(x0 + 1, x1).some((glyph) => LINE.has(glyph) && glyph !== "─" && glyph !== "━")) return;
      let y1 = y + 1;
      while (y1 < grid.length && VERTICAL.has(at(x0, y1))) y1 += 1;
      if (!BOTTOM_LEFT.has(at(x0, y1))) return;
      for (let yy = y + 1; yy < y1; yy += 1) {
        if (!VERTICAL.has(at(x1, yy)))
          problems.push(`card at ${x0},${y} has a broken right border at row ${yy}`);
      }
      if (!BOTTOM_RIGHT.has(at(x1, y1))) problems.push(`card at ${x0},${y} has no bottom-right corner`);
      for (let xx = x0 + 1; xx < x1; xx += 1) {
        if (!BOTTOM.has(at(xx, y1))) problems.push(`card at ${x0},${y} has a broken bottom border at ${xx}`);
      }
      const title = (grid[y + 1] ?? [])
        .slice(x0 + 1, x1)
        .join("")
        .trim();
      const name = title.slice(title.indexOf(" ") + 1);
      const id = title.startsWith("◎ ") ? `exit:${name}` : name;
      for (const other of cards) {
        if (x0 <= other.x1 && x1 >= other.x0 && y <= other.y1 && y1 >= other.y0) {
          problems.push(`cards ${other.id} and ${id} overlap`);
        }
      }
      cards.push({ id, x0, y0: y, x1, y1 });
    });
  });

  const seen = new Set<string>();
  const mark = (x: number, y: number) => seen.add(`${x},${y}`);
  const edges: ParsedEdge[] = [];
  const rowText = (card: ParsedCard, y: number) =>
    (grid[y] ?? [])
      .slice(card.x0 + 1, card.x1)
      .join("")
      .trim();
  // Labeled departures sit below the two content rows; unlabeled rows there are empty.
  const portLabel = (card: ParsedCard, y: number) => {
    if (y - card.y0 <= 2) return undefined;
    const text = rowText(card, y);
    return text === "" ? undefined : text;
  };

  // Follows a line from (x, y) moving by (dx, dy); returns where it stopped and the glyph there.
  const follow = (x: number, y: number, dx: number, dy: number, through: Set<string>) => {
    let cx = x;
    let cy = y;
    while (through.has(at(cx, cy))) {
      mark(cx, cy);
      cx += dx;
      cy += dy;
    }
    mark(cx, cy);
    return { x: cx, y: cy, glyph: at(cx, cy) };
  };
  const horizontal = new Set(["─", "┼"]);
  const vertical = new Set(["│", "┼"]);

  for (const card of cards) {
    // Straight down to the next card.
    for (let x = card.x0 + 1; x < card.x1; x += 1) {
      const glyph = at(x, card.y1);
      if (glyph !== "┬" && glyph !== "┰") continue;
      const end = follow(x, card.y1 + 1, 0, 1, new Set(["│"]));
      const target =
        end.glyph === "▼" ? cards.find((c) => c.y0 === end.y + 1 && x > c.x0 && x < c.x1) : undefined;
      if (!target) {
        problems.push(`the line down from ${card.id} ends at ${end.x},${end.y} on "${end.glyph}"`);
        continue;
      }
      const gap = (grid[card.y1 + 1] ?? []).slice(x + 2);
      const cut = gap.findIndex((glyph) => LINE.has(glyph));
      const label = (cut < 0 ? gap : gap.slice(0, cut)).join("").trim();
      edges.push({ from: card.id, to: target.id, label: label === "" ? undefined : label });
    }
    for (let y = card.y0 + 1; y < card.y1; y += 1) {
      const rightGlyph = at(card.x1 + 1, y);
      if (rightGlyph === "─") {
        let end = follow(card.x1 + 1, y, 1, 0, horizontal);
        if (end.glyph === "╮") end = follow(end.x, end.y + 1, 0, 1, vertical);
        if (end.glyph === "╯") end = follow(end.x - 1, end.y, -1, 0, horizontal);
        const target =
          end.glyph === "◀"
            ? cards.find((c) => c.x1 === end.x - 1 && end.y > c.y0 && end.y < c.y1)
            : undefined;
        if (!target)
          problems.push(`the right-hand line from ${card.id} ends at ${end.x},${end.y} on "${end.glyph}"`);
        else edges.push({ from: card.id, to: target.id, label: portLabel(card, y) });
      } else if (rightGlyph === "◀") {
        mark(card.x1 + 1, y);
      } else if (rightGlyph !== " ") {
        problems.push(`unexpected "${rightGlyph}" beside ${card.id} at row ${y}`);
      }
      const leftGlyph = at(card.x0 - 1, y);
      if (leftGlyph === "─" || leftGlyph === "╰") {
        let end = follow(card.x0 - 1, y, -1, 0, horizontal);
        if (end.glyph === "╰") end = follow(end.x, end.y - 1, 0, -1, vertical);
        if (end.glyph === "╭") end = follow(end.x + 1, end.y, 1, 0, horizontal);
        const target =
          end.glyph === "▶"
            ? cards.find((c) => c.x0 === end.x + 1 && end.y > c.y0 && end.y < c.y1)
            : undefined;
        if (!target)
          problems.push(`the left-hand line from ${card.id} ends at ${end.x},${end.y} on "${end.glyph}"`);
        else edges.push({ from: card.id, to: target.id, label: portLabel(card, y) });
      } else if (leftGlyph === "▶") {
        mark(card.x0 - 1, y);
      } else if (leftGlyph !== " " && card.x0 > 0) {
        problems.push(`unexpected "${leftGlyph}" beside ${card.id} at row ${y}`);
      }
    }
  }

  // Every line glyph outside the cards must belong to an edge that was followed end to end.
  grid.forEach((row, y) => {
    row.forEach((char, x) => {
      if (LINE.has(char) && !inCard(x, y) && !seen.has(`${x},${y}`)) {
        problems.push(`stray "${char}" at ${x},${y}`);
      }
    });
  });
  return { cards, edges, problems };
}
