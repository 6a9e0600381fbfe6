import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import ts from "typescript";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

// The replay names every trace event in one switch that ends in `satisfies never`. One program
// compiles the real replay module against the real protocol, and a copy of it against a protocol whose
// trace vocabulary has one event more: the first must be clean, the copy must fail exactly at the
// exhaustiveness check.

const root = resolve(import.meta.dirname, "../../..");
const replay = join(root, "packages/viewer/src/replay.ts");
const protocol = join(root, "packages/protocol/src/index.ts");
const dir = mkdtempSync(join(tmpdir(), "piw-replay-types-"));
afterAll(() => rmSync(dir, { recursive: true, force: true, maxRetries: 20, retryDelay: 100 }));

/** The protocol with one more trace event, which the replay has no rule for. */
const widened = join(dir, "protocol.ts");
writeFileSync(
  widened,
  `export * from ${JSON.stringify(protocol)};
import type { TraceEvent as Recorded } from ${JSON.stringify(protocol)};
export type TraceEvent = Recorded | { type: "run.added_later"; path: null; visit: null; data: null };
export type HistoryEvent = { seq: number; at: number } & TraceEvent;
`,
);
const source = readFileSync(replay, "utf8");
const copy = join(dir, "replay.ts");
writeFileSync(copy, source.replace('from "@piw/protocol"', `from ${JSON.stringify(widened)}`));

let diagnostics: readonly ts.Diagnostic[] = [];
// Type-checking the protocol's zod schemas takes seconds on a busy machine.
beforeAll(() => {
  const program = ts.createProgram([replay, copy], {
    target: ts.ScriptTarget.ES2023,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    lib: ["lib.es2023.d.ts"],
    types: [],
    strict: true,
    noEmit: true,
    skipLibCheck: true,
    allowImportingTsExtensions: true,
    noUncheckedIndexedAccess: true,
    paths: { "@piw/protocol": [protocol] },
  });
  diagnostics = ts.getPreEmitDiagnostics(program);
}, 180_000);

function errorsIn(fileName: string): ts.Diagnostic[] {
  return diagnostics.filter((d) => d.file?.fileName === fileName);
}

function lineOf(diagnostic: ts.Diagnostic): string {
  const { file, start } = diagnostic;
  if (file === undefined || start === undefined) return "";
  const { line } = file.getLineAndCharacterOfPosition(start);
  return file.text.split("\n")[line]?.trim() ?? "";
}

const message = (d: ts.Diagnostic) => ts.flattenDiagnosticMessageText(d.messageText, "\n");

describe("the replay's exhaustive switch", () => {
  it("compiles against the protocol's trace vocabulary", () => {
    expect(errorsIn(replay).map(message)).toEqual([]);
  });

  it("fails to compile when an event has no replay rule", () => {
    expect(source).toContain('from "@piw/protocol"');
    const errors = errorsIn(copy);
    expect(errors.map(lineOf)).toEqual(["event satisfies never;"]);
    expect(message(errors[0] as ts.Diagnostic)).toContain("run.added_later");
  });
});
