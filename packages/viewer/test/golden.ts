import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { expect } from "vitest";

// Whole screens, rendered without colour at fixed sizes and compared with the text files under
// test/golden. `PIW_UPDATE_GOLDEN=1 pnpm vitest run packages/viewer/test/<file>.test.ts` writes
// them again; review the diff before committing it.

const GOLDEN = join(import.meta.dirname, "golden");
const UPDATE = process.env.PIW_UPDATE_GOLDEN === "1";

export function expectGolden(name: string, lines: string[]): void {
  const file = join(GOLDEN, `${name}.txt`);
  const text = `${lines.map((line) => line.trimEnd()).join("\n")}\n`;
  if (UPDATE || !existsSync(file)) {
    if (!UPDATE) throw new Error(`no golden frame ${name}.txt; run with PIW_UPDATE_GOLDEN=1 to write it`);
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, text);
  }
  expect(text).toBe(readFileSync(file, "utf8"));
}
