import { mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import {
  type ActionContext,
  action,
  compileWorkflow,
  defineWorkflow,
  executeRun,
  MemoryRunPort,
} from "../src/index.js";
import { started } from "./memory-run.js";

// `ctx.exec`: an action runs a command inside its effect the way a shell node does, and gets the
// report whatever the exit code, so the effect (a push, a PR) decides what a failure means.

const dir = realpathSync(mkdtempSync(join(tmpdir(), "piw-exec-")));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function runAction(run: (ctx: ActionContext) => unknown) {
  const wf = compileWorkflow(
    defineWorkflow({
      name: "exec",
      startAt: "act",
      nodes: { act: action({ run }) },
      edges: { act: { to: "done" } },
    }),
  );
  const port = started(new MemoryRunPort({}));
  return { port, outcome: executeRun({ workflow: wf, port, env: { PIW_EXEC_TEST: "from the run" } }) };
}

describe("ctx.exec in an action", () => {
  it("runs a command inside an effect with the run's environment and returns its report on any exit code", async () => {
    const { port, outcome } = runAction(({ effects, exec }) =>
      effects.idempotent("probe", { dir }, () =>
        exec(
          { shell: 'echo "$PIW_EXEC_TEST in $(pwd) $EXTRA"; echo oops >&2; exit 3' },
          { cwd: dir, env: { EXTRA: "x" } },
        ),
      ),
    );
    expect(await outcome).toEqual({
      kind: "completed",
      output: { exitCode: 3, stdout: `from the run in ${dir} x`, stderr: "oops" },
    });
    expect(port.visits.map((v) => v.status)).toEqual(["succeeded"]);
  });

  it("fails the node with a safe message when the command cannot start or runs past its time", async () => {
    const missing = runAction(({ exec }) => exec(["piw-no-such-program-secret"]));
    expect(await missing.outcome).toMatchObject({ kind: "failed" });
    const error = JSON.stringify(missing.port.visits[0]?.error);
    expect(error).toContain("Starting a command of act threw an Error (ENOENT)");
    expect(error).not.toContain("secret");

    const slow = runAction(({ exec }) => exec(["sleep", "5"], { timeoutMs: 50 }));
    expect(await slow.outcome).toMatchObject({ kind: "failed" });
    expect(JSON.stringify(slow.port.visits[0]?.error)).toContain("A command of act ran past 50 ms.");
  });
});
