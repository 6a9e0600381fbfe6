import { execFileSync } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import {
  lastMessageText,
  lastToolResultText,
  piwMessages,
  type PiwWorld,
  type RpcRecord,
  startPiwWorld,
  text,
  toolCall,
  whenLastMessageContains,
} from "@piw/test-kit";

// The built-in autoimplement started in the real Pi with a plan path: `/workflow autoimplement
// docs/plans/<file>.md`. Implement and fix run in the conversation; the checks are the repository's
// own and really run; the reviewers are isolated read-only sessions; the commit lands on the run's branch.
let world: PiwWorld | undefined;
afterEach(async () => {
  await world?.close();
  world = undefined;
});

function isNotice(needle: string): (event: RpcRecord) => boolean {
  return (event) =>
    event.type === "extension_ui_request" &&
    event.method === "notify" &&
    String(event.message).includes(needle);
}

const submit = (output: unknown) => toolCall("workflow", { action: "submit", output });
/** The workspace the step prompt names: a conversation step writes there, not in Pi's own folder. */
const workspaceIn = (prompt: string): string | undefined => /Work in (\/\S+) \(branch/.exec(prompt)?.[1];

describe("/workflow autoimplement in Pi", () => {
  it("implements a plan file: verify fails, fix, verify passes, review, commit", async () => {
    world = await startPiwWorld();
    const { model, pi, project } = world;
    const git = (cwd: string, ...args: string[]) =>
      execFileSync("git", args, { cwd, encoding: "utf8" }).trim();
    git(project, "init", "-q", "-b", "main");
    git(project, "config", "user.email", "dev@example.com");
    git(project, "config", "user.name", "Dev");
    writeFileSync(join(project, ".git", "info", "exclude"), ".pi/\n");
    writeFileSync(
      join(project, "package.json"),
      JSON.stringify({ type: "module", scripts: { test: "node --test" } }, null, 2),
    );
    writeFileSync(join(project, "sum.js"), "export const sum = (a, b) => a - b;\n");
    writeFileSync(
      join(project, "sum.test.js"),
      'import { test } from "node:test";\nimport assert from "node:assert/strict";\nimport { sum } from "./sum.js";\n\ntest("sum adds", () => assert.equal(sum(2, 3), 5));\n',
    );
    mkdirSync(join(project, "docs", "plans"), { recursive: true });
    writeFileSync(
      join(project, "docs", "plans", "fix-sum.md"),
      "# Make sum add\n\nsum subtracts; it must add its two arguments. sum.test.js proves it.\n",
    );
    git(project, "add", ".");
    git(project, "commit", "-qm", "start");

    // Implement writes only a note, so the first checks fail; the fix corrects sum.js.
    model.reply((r) => {
      const prompt = lastMessageText(r);
      const where = workspaceIn(prompt);
      if (where === undefined || !prompt.includes("Implement the plan in")) return undefined;
      return toolCall("write", { path: join(where, "NOTES.md"), content: "sum must add.\n" });
    });
    model.reply((r) => {
      const prompt = lastMessageText(r);
      const where = workspaceIn(prompt);
      if (where === undefined || !prompt.includes("These checks fail")) return undefined;
      return toolCall("write", {
        path: join(where, "sum.js"),
        content: "export const sum = (a, b) => a + b;\n",
      });
    });
    model.reply((r) =>
      lastToolResultText(r)?.includes("NOTES.md")
        ? submit({
            status: "done",
            summary: "Wrote down what sum must do.",
            files: [{ path: "NOTES.md", change: "added", why: "the plan's goal" }],
            blocker: null,
          })
        : undefined,
    );
    model.reply((r) =>
      lastToolResultText(r)?.includes("sum.js")
        ? submit({
            status: "done",
            summary: "sum adds its arguments.",
            files: [{ path: "sum.js", change: "modified", why: "it subtracted" }],
            blocker: null,
          })
        : undefined,
    );
    model.reply(whenLastMessageContains("Review the change in", submit({ summary: "Sound.", findings: [] })));
    model.reply(whenLastMessageContains("Final output", text("Committed.")));
    model.reply((r) => (lastToolResultText(r) !== undefined ? text("Done.") : undefined));

    const since = pi.mark();
    await pi.prompt("/workflow autoimplement docs/plans/fix-sum.md");
    const queued = await pi.waitForEvent(isNotice("queued (run"), { since, timeoutMs: 60_000 });
    const runId = /\(run ([^)]+)\)/.exec(String(queued.message))?.[1] as string;
    const done = await world.waitForRun(runId, (view) => view.status === "done", 240_000);
    expect(done.outcome).toBe("completed");
    expect(done.input).toEqual({ kind: "json", value: { task: "docs/plans/fix-sum.md" } });
    const worktree = join(`${project}.worktrees`, `piw-${runId}`);
    expect(done.output).toMatchObject({
      kind: "json",
      value: {
        status: "committed",
        workspace: { path: worktree, branch: `piw/${runId}` },
        checks: [
          { round: 1, command: "npm run test", passed: false },
          { round: 2, command: "npm run test", passed: true },
        ],
        commit: { branch: `piw/${runId}`, files: ["NOTES.md", "sum.js"] },
      },
    });
    expect(git(worktree, "log", "-1", "--format=%s")).toBe("Make sum add");
    expect(readFileSync(join(worktree, "sum.js"), "utf8")).toContain("a + b");
    expect(git(project, "branch", "--show-current")).toBe("main");

    // Implement and fix were the step prompts delivered to the conversation; the reviewers ran isolated.
    const prompts = (await piwMessages(pi)).filter((m) => m.details.kind === "step_prompt");
    expect(prompts.map((m) => m.details.path)).toEqual(["implement", "fix"]);
    model.assertNoErrors();
  }, 360_000);
});
