#!/usr/bin/env node
// Prints the test total for CI as its last line: "N passed, N failed[, N skipped]".
// Usage: node tools/ci/test-summary.mjs [exit code of the test command]
// Reads the vitest JSON report; a missing or unreadable report counts as one failure, and so does a
// non-zero exit code with no failed test in the report, so the line never claims a success that
// did not happen.
import { readFileSync } from "node:fs";
import { join } from "node:path";

const reportPath = join(import.meta.dirname, "..", "..", ".reports", "vitest.json");
const exitCode = Number(process.argv[2] ?? "0");

let report;
try {
  report = JSON.parse(readFileSync(reportPath, "utf8"));
} catch {
  report = undefined;
}

const passed = report?.numPassedTests ?? 0;
const skipped = (report?.numPendingTests ?? 0) + (report?.numTodoTests ?? 0);
let failed = report?.numFailedTests ?? 1;
if (failed === 0 && (exitCode !== 0 || report?.success === false)) {
  failed = Math.max(report?.numFailedTestSuites ?? 0, 1);
}

console.log(`${passed} passed, ${failed} failed${skipped > 0 ? `, ${skipped} skipped` : ""}`);
