import { visibleWidth } from "@earendil-works/pi-tui";
import { clipToWidth } from "./text-width.js";
import type { Theme, Tint } from "./theme.js";

/**
 * A grid of single-width cells, each with an optional tint. Renderers draw into it by coordinates and
 * turn it into lines at the end, so nothing drawn later can shift what was drawn before.
 */
const widths = new Map<string, number>();

/** Columns one character takes, remembered: the renderers ask for the same few glyphs all the time. */
function charWidth(char: string): number {
  let width = widths.get(char);
  if (width === undefined) {
    width = visibleWidth(char);
    widths.set(char, width);
  }
  return width;
}

/**
 * A grid of single-width cells, each with an optional tint. Renderers draw into it by coordinates and
 * turn it into lines at the end, so nothing drawn later can shift what was drawn before. Only the rows
 * from `top` for `height` rows are kept: drawing elsewhere is dropped, so a frame costs what it shows.
 */
export class Canvas {
  private readonly cells: string[][] = [];
  private readonly tints: (Tint | undefined)[][] = [];

  constructor(
    readonly width: number,
    readonly height: number,
    readonly top = 0,
    /** What a cut text ends with. */
    readonly ellipsis = "…",
  ) {
    for (let y = 0; y < height; y += 1) {
      this.cells.push(new Array<string>(width).fill(" "));
      this.tints.push(new Array<Tint | undefined>(width).fill(undefined));
    }
  }

  get(x: number, y: number): string {
    return this.cells[y - this.top]?.[x] ?? " ";
  }

  set(x: number, y: number, char: string, tint?: Tint): void {
    const row = this.cells[y - this.top];
    if (row === undefined || x < 0 || x >= this.width) return;
    row[x] = char;
    const tints = this.tints[y - this.top] as (Tint | undefined)[];
    tints[x] = tint;
  }

  /** Writes text cell by cell, cut at `maxWidth` columns; wide characters are replaced. */
  text(x: number, y: number, text: string, maxWidth: number, tint?: Tint): void {
    if (this.cells[y - this.top] === undefined) return;
    let total = 0;
    for (const char of text) total += charWidth(char);
    const fitted = total > maxWidth ? clipToWidth(text, maxWidth, this.ellipsis) : text;
    let column = x;
    for (const char of fitted) {
      if (column >= x + maxWidth) break;
      this.set(column, y, charWidth(char) === 1 ? char : "?", tint);
      column += 1;
    }
  }

  /** The kept rows as strings, painted with `theme`, trailing blanks removed. */
  lines(theme: Theme): string[] {
    const out: string[] = [];
    for (let y = 0; y < this.height; y += 1) {
      const cells = this.cells[y] as string[];
      const tints = this.tints[y] as (Tint | undefined)[];
      let end = cells.length;
      while (end > 0 && cells[end - 1] === " ") end -= 1;
      let line = "";
      let run = "";
      let runTint: Tint | undefined;
      for (let x = 0; x < end; x += 1) {
        const tint = tints[x];
        if (tint !== runTint && run !== "") {
          line += runTint === undefined ? run : theme(runTint, run);
          run = "";
        }
        runTint = tint;
        run += cells[x];
      }
      if (run !== "") line += runTint === undefined ? run : theme(runTint, run);
      out.push(line);
    }
    return out;
  }
}
