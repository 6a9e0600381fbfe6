import { compileWorkflow } from "@piw/engine";
import { describe, expect, it } from "vitest";
import publish from "../src/autoimplement-publish.js";
import {
  actionsRunId,
  parseChecks,
  parseFailedLogs,
  prNumberOf,
} from "../src/autoimplement-publish-scripts.js";
import { BUILTIN_WORKFLOWS } from "../src/index.js";

// The publish child's own pieces: how gh's answers are read. The whole flow runs through the real
// CLI in apps/piw/test/autoimplement-publish.test.ts.

const report = (exitCode: number, stdout: string, stderr = "") => ({ exitCode, stdout, stderr });

describe("autoimplement's publish child", () => {
  it("compiles with its four exits and is not a listed built-in", () => {
    const compiled = compileWorkflow(publish);
    expect(compiled.name).toBe("autoimplement-publish");
    expect(BUILTIN_WORKFLOWS.map((definition) => definition.name)).not.toContain("autoimplement-publish");
  });

  it("reads the PR's checks: failing wins over pending, pending over passing, none when gh reports none", () => {
    const checks = (...buckets: string[]) =>
      JSON.stringify(buckets.map((bucket, i) => ({ name: `c${i}`, bucket, link: "" })));
    expect(parseChecks(report(1, checks("pass", "fail", "pending"))).state).toBe("failing");
    expect(parseChecks(report(1, checks("pass", "cancel"))).state).toBe("failing");
    expect(parseChecks(report(8, checks("pass", "pending"))).state).toBe("pending");
    expect(parseChecks(report(0, checks("pass", "skipping"))).state).toBe("passing");
    // An unknown bucket is never taken for a pass.
    expect(parseChecks(report(0, checks("pass", "queued-later"))).state).toBe("pending");
    expect(parseChecks(report(1, "", "no checks reported on the 'feature' branch"))).toEqual({
      state: "none",
      checks: [],
    });
    expect(() => parseChecks(report(1, "", "HTTP 502"))).toThrow(/neither checks nor why/);
  });

  it("finds the Actions run of a check, the PR number in gh's URL, and splits the log tails", () => {
    expect(actionsRunId("https://github.com/o/r/actions/runs/77/job/9")).toBe("77");
    expect(actionsRunId("https://ci.example.com/build/5")).toBe("");
    expect(prNumberOf("https://github.com/o/r/pull/12\n")).toBe(12);
    expect(prNumberOf("created")).toBeNull();
    expect(parseFailedLogs("\u001echeck test\nline 1\nline 2\n\u001echeck lint\n")).toEqual([
      { name: "test", log: "line 1\nline 2" },
      { name: "lint", log: "" },
    ]);
    const long = parseFailedLogs(`\u001echeck big\n${"x".repeat(10_000)}`);
    expect(long[0]?.log.length).toBe(6000);
  });
});
