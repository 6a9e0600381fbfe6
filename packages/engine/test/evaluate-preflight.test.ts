import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { isAlive, removeTree, waitFor } from "@piw/test-kit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  evaluatePreflight,
  LaunchRefused,
  type PreflightOptions,
  preflightLaunch,
  readPreflightEnv,
} from "../src/index.js";

// Every outcome of the preflight evaluator, each from a real child process: stand-in children written
// as `node -e` scripts for the ways a child can misbehave, and the real preflight entry for workflows.
const REPO = resolve(import.meta.dirname, "../../..");
const TSX = join(REPO, "node_modules/tsx/dist/loader.mjs");
const ENTRY = [process.execPath, "--import", TSX, join(REPO, "apps/worker/src/preflight.ts")];
const ENV = { ...process.env, TSX_TSCONFIG_PATH: join(REPO, "tsconfig.json") };

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "piw-evaluate-preflight-"));
});
afterAll(() => removeTree(dir));

const launch = (requestId = "r1") =>
  ({ type: "launch", requestId, ref: "x", cwd: dir, piSession: false }) as const;
const script = (source: string): PreflightOptions => ({ command: [process.execPath, "-e", source] });

describe("evaluatePreflight", () => {
  it("reports a child that exits, dies by a signal, or cannot start", async () => {
    const [exited, killed, missing] = await Promise.all([
      evaluatePreflight(launch(), script("process.exit(3)")),
      evaluatePreflight(launch(), script('process.kill(process.pid, "SIGTERM")')),
      evaluatePreflight(launch(), { command: [join(dir, "no-such-binary")] }),
    ]);
    expect(exited).toEqual({ kind: "exited", exitCode: 3, signal: null });
    expect(killed).toEqual({ kind: "exited", exitCode: null, signal: "SIGTERM" });
    expect(missing).toEqual({ kind: "spawn_failed", reason: "ENOENT" });
  });

  it("ignores messages for another request, and refuses a malformed reply to this one", async () => {
    const reply = (body: string) =>
      script(
        `process.once("message", (m) => { process.send({ type: "crashed", requestId: "other" }); ${body} });`,
      );
    const [invalid, valid] = await Promise.all([
      evaluatePreflight(
        launch(),
        reply('process.send({ type: "launch.prepared", requestId: m.requestId });'),
      ),
      evaluatePreflight(launch(), reply('process.send({ type: "crashed", requestId: m.requestId });')),
    ]);
    expect(invalid).toEqual({ kind: "reply_invalid" });
    expect(valid).toEqual({ kind: "replied", reply: { type: "crashed", requestId: "r1" } });
  });

  it("stops a child that never answers after the time limit, with every process of its group", async () => {
    const pids = join(dir, "pids");
    const started = Date.now();
    const outcome = await evaluatePreflight(launch(), {
      ...script(
        `const c = require("node:child_process").spawn("sleep", ["300"], { stdio: "ignore" });
         require("node:fs").writeFileSync(${JSON.stringify(pids)}, process.pid + " " + c.pid);
         setInterval(() => {}, 1000);`,
      ),
      timeoutMs: 4000,
    });
    expect(outcome).toEqual({ kind: "timed_out", timeoutMs: 4000 });
    expect(Date.now() - started).toBeGreaterThanOrEqual(4000);
    const [child, grandchild] = readFileSync(pids, "utf8").split(" ").map(Number);
    expect(isAlive(child ?? 0)).toBe(false);
    // The grandchild got SIGKILL with the group; give the kernel a moment to deliver it.
    await waitFor("the grandchild to be gone", () => !isAlive(grandchild ?? 0), 1_000);
  });

  it("turns a workflow that throws from a timer while it loads into workflow_crashed_at_load", async () => {
    const file = join(dir, "late.workflow.ts");
    writeFileSync(
      file,
      `import { compute, defineWorkflow } from "piw";
await new Promise((resolve) => setTimeout(resolve, 10));
setTimeout(() => { throw new Error("late"); }, 0);
await new Promise((resolve) => setTimeout(resolve, 200));
export default defineWorkflow({ name: "late", startAt: "a", nodes: { a: compute({ run: () => 1 }) }, edges: { a: { to: "done" } } });
`,
    );
    const refused = await preflightLaunch(
      { ref: file, cwd: dir, piSession: false },
      { command: ENTRY, env: ENV },
    ).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(refused).toBeInstanceOf(LaunchRefused);
    expect((refused as LaunchRefused).code).toBe("workflow_crashed_at_load");
    expect((refused as LaunchRefused).message).toBe(
      `workflow ${file} crashed while loading (its code threw outside the import, e.g. in a timer)`,
    );
  }, 60_000);
});

describe("readPreflightEnv", () => {
  it("takes a JSON argv and a whole number of ms, and names a bad one", () => {
    expect(readPreflightEnv({})).toEqual({ kind: "ok", command: undefined, timeoutMs: 10_000 });
    expect(
      readPreflightEnv({ PIW_PREFLIGHT_COMMAND: '["node","p.js"]', PIW_PREFLIGHT_TIMEOUT_MS: "250" }),
    ).toEqual({
      kind: "ok",
      command: ["node", "p.js"],
      timeoutMs: 250,
    });
    expect(readPreflightEnv({ PIW_PREFLIGHT_COMMAND: "node p.js" }).kind).toBe("invalid");
    expect(readPreflightEnv({ PIW_PREFLIGHT_TIMEOUT_MS: "soon" }).kind).toBe("invalid");
  });
});
