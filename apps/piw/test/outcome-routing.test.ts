import type { RunView } from "@piw/protocol";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cleanUp, example, makeHome, piw, runIdIn } from "./cli-harness.js";

// The real CLI, host and worker processes, from source.
const SLOW = 120_000;

describe("outcome routing through piw run", () => {
  let home: string;
  beforeAll(() => {
    home = makeHome();
  });
  afterAll(() => cleanUp(home));

  it(
    "runs flaky-tests: the failed test visit is shown failed, the run goes on to the fix and completes",
    async () => {
      const result = await piw(home, ["run", example("flaky-tests")]);
      expect(result.stderr).toBe("");
      expect(result.code).toBe(0);
      const runId = runIdIn(result.stdout);
      const lines = result.stdout.trimEnd().split("\n");
      // The failed visit is reported as failed, and the run goes on along the route.
      const failedAt = lines.findIndex((line) => /^ {2}✗ test +shell +#1 .*failed: node_failed$/.test(line));
      expect(failedAt).toBeGreaterThan(0);
      expect(lines.slice(failedAt + 1)).toContainEqual(expect.stringMatching(/^ {2}▶ fix +shell +#1 +running$/));
      expect(lines).toContainEqual(expect.stringMatching(/^ {2}✓ test +shell +#2 /));
      expect(lines.at(-1)).toMatch(new RegExp(`^✓ flaky-tests completed in \\S+ {2}${runId}$`));
      const status = await piw(home, ["status", runId, "--json"]);
      const view = JSON.parse(status.stdout) as RunView;
      expect(view).toMatchObject({ status: "done", outcome: "completed" });
      expect(view.nodes.map((n) => [n.path, n.state, n.visits])).toEqual([
        ["prepare", "succeeded", 1],
        ["test", "succeeded", 2],
        ["fix", "succeeded", 1],
        ["report", "succeeded", 1],
        ["giveUp", "pending", 0],
      ]);
      expect(view.manifest.edges).toContainEqual({
        from: "test",
        to: { kind: "node", path: "fix" },
        label: "exit 1",
      });
    },
    SLOW,
  );
});
