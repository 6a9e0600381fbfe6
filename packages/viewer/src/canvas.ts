import { visibleWidth } from "@earendil-works/pi-tui";
import { clipToWidth } from "./text-width.js";
import type { Theme, Tint } from "./theme.js";

/**
 * A grid of single-width cells, each with an optional tint. Renderers draw into it by coordinates and
 * turn it into lines at the end, so nothing drawn later can shift what was drawn before.
 */
export class Canvas {
  private readonly cells: string[][] = [];
  private readonly tints: (Tint | undefined)[][] = [];

  constructor(
    readonly width: number,
    readonly height: number,
  ) {
    for (let y = 0; y < height; y += 1) {
      this.cells.push(new Array<string>(width).fill(" "));
      this.tints.push(new Array<Tint | undefined>(width).fill(undefined));
    }
  }

  get(x: number, y: number): string {
    return this.cells[y]?.[x] ?? " ";
  }

  set(x: number, y: number, char: string, tint?: Tint): void {
    const row = this.cells[y];
    if (row === undefined || x < 0 || x >= this.width) return;
    row[x] = char;
    const tints = this.tints[y] as (Tint | undefined)[];
    tints[x] = tint;
  }

  /** Writes text cell by cell, cut at `maxWidth` columns; wide characters are replaced. */
  text(x: number, y: number, text: string, maxWidth: number, tint?: Tint): void {
    const fitted = visibleWidth(text) > maxWidth ? clipToWidth(text, maxWidth, "…") : text;
    let column = x;
    for (const char of fitted) {
      if (column >= x + maxWidth) break;
      this.set(column, y, visibleWidth(char) === 1 ? char : "?", tint);
      column += 1;
    }
  }

  /** Rows `from` to `to` (exclusive) as strings, painted with `theme`, trailing blanks removed. */
  lines(theme: Theme, from = 0, to = this.height): string[] {
    const out: string[] = [];
    for (let y = Math.max(0, from); y < Math.min(this.height, to); y += 1) {
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
