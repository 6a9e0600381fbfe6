import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { RunView } from "@piw/protocol";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { removeTree, waitFor } from "@piw/test-kit";
import { cleanUp, collect, example, makeHome, piw, runIdIn, spawnPiw } from "./cli-harness.js";

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
      // The failed visit is printed failed, though views of a followed run are coalesced and a later
      // visit may replace it before a view shows it (the passed-visits rule); then the fix step.
      const failedAt = lines.findIndex((line) => /^ {2}✗ test +shell +#1 .*failed: node_failed$/.test(line));
      expect(failedAt).toBeGreaterThan(0);
      const fixAt = lines.findIndex((line) =>
        /^ {2}(▶ fix +shell +#1 +running|✓ fix +shell +#1 )/.test(line),
      );
      expect(fixAt).toBeGreaterThan(failedAt);
      expect(lines).toContainEqual(expect.stringMatching(/^ {2}✓ test +shell +#2 /));
      const doneAt = lines.findIndex((line) =>
        new RegExp(`^✓ flaky-tests completed in \\S+ {2}${runId}$`).test(line),
      );
      expect(doneAt).toBeGreaterThan(fixAt);
      // After the outcome, the run's output: the fix step saw the failure that routed the run to it.
      expect(lines[doneAt + 1]).toBe("output");
      const output = lines.slice(doneAt + 2).join("\n");
      expect(output).toContain('"passed": true');
      expect(output).toContain('"fixedAfter": 1');
      expect(output).toContain('"sawFailure": true');
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

/** A command that waits for `release` in the run's folder, then `after`, whose name and value vary. */
function editedWorkflow(after: string, value: string): string {
  return `import { compute, defineWorkflow, shell } from "piw";

export default defineWorkflow({
  name: "edited",
  startAt: "work",
  nodes: {
    work: shell({ exec: () => ["sh", "-c", "until [ -e release ]; do sleep 0.05; done"], timeoutMs: 60_000 }),
    ${after}: compute({ run: () => ${JSON.stringify(value)} }),
  },
  edges: { work: { to: "${after}" }, ${after}: { to: "done" } },
});
`;
}

describe("piw resume --accept-changes through the real CLI and host", () => {
  let home: string;
  let project: string;
  let file: string;
  beforeAll(() => {
    home = makeHome();
    project = mkdtempSync(join(tmpdir(), "piw-project-"));
    mkdirSync(join(project, ".pi", "workflows"), { recursive: true });
    file = join(project, ".pi", "workflows", "edited.workflow.ts");
    writeFileSync(file, editedWorkflow("after", "v1"));
  });
  afterAll(async () => {
    await cleanUp(home);
    removeTree(project);
  });

  it(
    "refuses an edit that loses the saved position (the run stays parked, with the reason), then resumes on a fitting edit",
    async () => {
      const follower = spawnPiw(home, ["run", "edited"], { cwd: project });
      const output = collect(follower);
      await waitFor("the command to start", () => /▶ work/.test(output.stdout()));
      const runId = runIdIn(output.stdout());
      expect((await piw(home, ["pause", runId])).code).toBe(0);
      writeFileSync(join(project, "release"), "");
      expect((await output).code).toBe(5);

      writeFileSync(file, editedWorkflow("later", "v2"));
      const refused = await piw(home, ["resume", runId, "--accept-changes"]);
      expect(refused.code).toBe(5);
      const parked = JSON.parse((await piw(home, ["status", runId, "--json"])).stdout) as RunView;
      expect(parked.status).toBe("parked");
      expect(parked.recoveryReason).toEqual({
        code: "changes_refused",
        message:
          "The changed workflow cannot continue this run: work led to after, which is not in the changed workflow.",
      });

      writeFileSync(file, editedWorkflow("after", "v2"));
      const resumed = await piw(home, ["resume", runId, "--accept-changes"]);
      expect(resumed.code).toBe(0);
      expect(resumed.stdout).toContain(`resumed ${runId} on its workflow file as it is now`);
      expect(resumed.stdout).toMatch(/^ {2}✓ after +compute +#1/m);
      const done = JSON.parse((await piw(home, ["status", runId, "--json"])).stdout) as RunView;
      expect(done).toMatchObject({ status: "done", outcome: "completed" });
      expect(done.nodes.find((node) => node.path === "work")?.visits).toBe(1);
    },
    SLOW,
  );
});
