import { mkdirSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { Resvg } from "@resvg/resvg-js";

// Turns a terminal screen, as `tmux capture-pane -e` prints it (text with SGR colour codes), into a
// PNG a reviewer can look at: ANSI → SVG here, SVG → pixels by resvg with a font shipped on npm, so
// the picture is the same on every machine.

const CELL_WIDTH = 9;
const CELL_HEIGHT = 18;
const PAD = 8;
const FONT_SIZE = 15;

const require = createRequire(import.meta.url);
const fontDir = join(dirname(require.resolve("dejavu-fonts-ttf/package.json")), "ttf");
const FONT_FILES = ["DejaVuSansMono.ttf", "DejaVuSansMono-Bold.ttf", "DejaVuSans.ttf"].map((f) =>
  join(fontDir, f),
);

const BACKGROUND = "#1e1e1e";
const FOREGROUND = "#d4d4d4";
const PALETTE = [
  "#000000",
  "#cd3131",
  "#0dbc79",
  "#e5e510",
  "#2472c8",
  "#bc3fbc",
  "#11a8cd",
  "#e5e5e5",
  "#666666",
  "#f14c4c",
  "#23d18b",
  "#f5f543",
  "#3b8eea",
  "#d670d6",
  "#29b8db",
  "#ffffff",
];

interface Style {
  fg: string | null;
  bg: string | null;
  bold: boolean;
  dim: boolean;
  inverse: boolean;
}

const PLAIN: Style = { fg: null, bg: null, bold: false, dim: false, inverse: false };

function applySgr(style: Style, params: number[]): Style {
  let next = { ...style };
  for (let i = 0; i < params.length; i += 1) {
    const p = params[i] ?? 0;
    if (p === 0) next = { ...PLAIN };
    else if (p === 1) next.bold = true;
    else if (p === 2) next.dim = true;
    else if (p === 22) next = { ...next, bold: false, dim: false };
    else if (p === 7) next.inverse = true;
    else if (p === 27) next.inverse = false;
    else if (p >= 30 && p <= 37) next.fg = PALETTE[p - 30] ?? null;
    else if (p >= 90 && p <= 97) next.fg = PALETTE[p - 90 + 8] ?? null;
    else if (p === 39) next.fg = null;
    else if (p >= 40 && p <= 47) next.bg = PALETTE[p - 40] ?? null;
    else if (p >= 100 && p <= 107) next.bg = PALETTE[p - 100 + 8] ?? null;
    else if (p === 49) next.bg = null;
    else if (p === 38 || p === 48) {
      // 256-colour and true-colour forms: keep the layout right, approximate the colour.
      const mode = params[i + 1];
      const colour =
        mode === 5
          ? (PALETTE[(params[i + 2] ?? 7) % 16] ?? FOREGROUND)
          : `rgb(${params[i + 2] ?? 0},${params[i + 3] ?? 0},${params[i + 4] ?? 0})`;
      if (p === 38) next.fg = colour;
      else next.bg = colour;
      i += mode === 5 ? 2 : 4;
    }
  }
  return next;
}

const ESC = String.fromCharCode(27);

interface Cell {
  char: string;
  style: Style;
}

/** The screen as rows of styled cells, one code point a column. */
function parseAnsiScreen(text: string): Cell[][] {
  const rows: Cell[][] = [];
  let style = { ...PLAIN };
  for (const line of text.replace(/\n$/, "").split("\n")) {
    const row: Cell[] = [];
    const pattern = new RegExp(`${ESC}\\[([0-9;]*)m|${ESC}\\[[0-9;?]*[A-Za-z]|([^${ESC}])`, "gu");
    for (const match of line.matchAll(pattern)) {
      if (match[1] !== undefined) {
        const params = match[1] === "" ? [0] : match[1].split(";").map((p) => Number(p) || 0);
        style = applySgr(style, params);
      } else if (match[2] !== undefined) {
        row.push({ char: match[2], style });
      }
    }
    rows.push(row);
  }
  return rows;
}

const escapeXml = (text: string) =>
  text.replaceAll("&", "&amp;").replaceAll("<", "&lt;").replaceAll(">", "&gt;").replaceAll('"', "&quot;");

/** An SVG of `columns` × `rows` cells showing the screen. */
function screenToSvg(text: string, columns: number, rows: number): string {
  const width = columns * CELL_WIDTH + 2 * PAD;
  const height = rows * CELL_HEIGHT + 2 * PAD;
  const parts = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}">`,
    `<rect width="${width}" height="${height}" fill="${BACKGROUND}"/>`,
  ];
  parseAnsiScreen(text)
    .slice(0, rows)
    .forEach((row, y) => {
      const top = PAD + y * CELL_HEIGHT;
      row.slice(0, columns).forEach((cell, x) => {
        const fg = cell.style.fg ?? FOREGROUND;
        const bg = cell.style.bg;
        const [ink, paper] = cell.style.inverse ? [bg ?? BACKGROUND, fg] : [fg, bg];
        const left = PAD + x * CELL_WIDTH;
        if (paper !== null)
          parts.push(
            `<rect x="${left}" y="${top}" width="${CELL_WIDTH}" height="${CELL_HEIGHT}" fill="${paper}"/>`,
          );
        if (cell.char === " ") return;
        const weight = cell.style.bold ? ' font-weight="bold"' : "";
        const opacity = cell.style.dim ? ' fill-opacity="0.6"' : "";
        parts.push(
          `<text x="${left}" y="${top + CELL_HEIGHT - 4}" fill="${ink}"${weight}${opacity}>${escapeXml(cell.char)}</text>`,
        );
      });
    });
  parts.push("</svg>");
  // One font for every cell: the default family is the shipped monospace font.
  return parts
    .join("\n")
    .replace("<rect", `<g font-family="DejaVu Sans Mono" font-size="${FONT_SIZE}"><rect`)
    .replace("</svg>", "</g></svg>");
}

export interface ScreenPng {
  file: string;
  width: number;
  height: number;
  /** Pixels that differ from the background: zero means nothing was drawn. */
  inked: number;
  png: Buffer;
}

/** Renders the screen to `<dir>/<name>.png` (and the text beside it) and says what it wrote. */
export function writeScreenPng(
  dir: string,
  name: string,
  text: string,
  columns: number,
  rows: number,
): ScreenPng {
  const svg = screenToSvg(text, columns, rows);
  const rendered = new Resvg(svg, {
    font: { loadSystemFonts: false, fontFiles: FONT_FILES, defaultFontFamily: "DejaVu Sans Mono" },
    fitTo: { mode: "original" },
  }).render();
  const png = rendered.asPng();
  const pixels = rendered.pixels;
  let inked = 0;
  // The background is #1e1e1e; count pixels that are not.
  for (let i = 0; i < pixels.length; i += 4) {
    if (pixels[i] !== 0x1e || pixels[i + 1] !== 0x1e || pixels[i + 2] !== 0x1e) inked += 1;
  }
  mkdirSync(dir, { recursive: true });
  const file = join(dir, `${name}.png`);
  writeFileSync(file, png);
  writeFileSync(join(dir, `${name}.txt`), text);
  return { file, width: rendered.width, height: rendered.height, inked, png };
}

/** Width and height from a PNG's IHDR chunk, or null when the bytes are not a PNG. */
export function pngSize(bytes: Buffer): { width: number; height: number } | null {
  const signature = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  if (bytes.length < 24 || !bytes.subarray(0, 8).equals(signature)) return null;
  if (bytes.subarray(12, 16).toString("latin1") !== "IHDR") return null;
  return { width: bytes.readUInt32BE(16), height: bytes.readUInt32BE(20) };
}

export const pngWidthFor = (columns: number) => columns * CELL_WIDTH + 2 * PAD;
export const pngHeightFor = (rows: number) => rows * CELL_HEIGHT + 2 * PAD;
