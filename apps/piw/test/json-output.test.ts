import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { removeTree, waitFor } from "@piw/test-kit";
import { ExitCode } from "../src/exit-codes.js";
import { OUTPUT_SCHEMAS } from "../src/output-schemas.js";
import {
  cleanUp,
  collect,
  example,
  makeHome,
  makeProject,
  piw,
  piwAtTerminal,
  runIdIn,
  spawnPiw,
} from "./cli-harness.js";

// The real CLI, host and worker processes from source; every --json output is parsed with its schema.
const SLOW = 180_000;

type Name = keyof typeof OUTPUT_SCHEMAS;
function parsed<K extends Name>(name: K, stdout: string) {
  return OUTPUT_SCHEMAS[name].parse(JSON.parse(stdout)) as ReturnType<(typeof OUTPUT_SCHEMAS)[K]["parse"]>;
}

describe("piw --json, exit codes and what the CLI says about a run", () => {
  let home: string;
  let project: string;
  beforeAll(() => {
    home = makeHome();
    project = makeProject();
  });
  afterAll(async () => {
    await cleanUp(home);
    removeTree(project);
  });

  it(
    "view --json and host status --json carry their schema, with the run list's input summaries",
    async () => {
      const run = await piw(home, ["run", example("hello"), "fix", "the", "login", "bug", "--json"]);
      const { runId } = parsed("run", run.stdout);
      const one = await piw(home, ["view", runId, "--json"]);
      expect(one.code).toBe(ExitCode.ok);
      const view = parsed("view", one.stdout);
      expect(view).toMatchObject({ schema: "piw.view.v1", runId, inputSummary: 'task: "fix the login bug"' });

      const all = await piw(home, ["view", "--json"]);
      const list = parsed("view", all.stdout);
      expect(list.schema).toBe("piw.view.v1");
      const row = "runs" in list ? list.runs.find((r) => r.runId === runId) : undefined;
      expect(row?.inputSummary).toBe('task: "fix the login bug"');
      const listed = parsed("list", (await piw(home, ["list", "--json"])).stdout);
      expect(listed.runs.find((r) => r.runId === runId)?.inputSummary).toBe('task: "fix the login bug"');

      const host = await piw(home, ["host", "status", "--json"]);
      expect(host.code).toBe(ExitCode.ok);
      expect(parsed("host", host.stdout)).toMatchObject({ schema: "piw.host-status.v1", running: true });
    },
    SLOW,
  );

  it(
    "run --json prints one object with the final view, input and output; status shows them as text",
    async () => {
      const run = await piw(home, ["run", example("hello"), "say", "hi", "--json"]);
      expect(run.stderr).toBe("");
      expect(run.code).toBe(ExitCode.ok);
      const out = parsed("run", run.stdout);
      expect(out).toMatchObject({ schema: "piw.run.v1", detached: false, state: "completed", exitCode: 0 });
      expect(out.view?.input).toEqual({ kind: "json", value: { task: "say hi" } });
      expect(out.view?.output).toEqual({ kind: "json", value: { said: "hello from piw: say hi" } });

      const status = await piw(home, ["status", out.runId, "--json"]);
      const view = parsed("status", status.stdout);
      expect(view.schema).toBe("piw.status.v1");
      expect(view.output).toEqual(out.view?.output);

      const text = await piw(home, ["status", out.runId]);
      expect(text.stdout).toMatch(/^input {5}\{"task":"say hi"\}$/m);
      expect(text.stdout).toMatch(/^output {4}\{"said":"hello from piw: say hi"\}$/m);

      // Without --json, `piw run` ends with the output too.
      const plain = await piw(home, ["run", example("hello"), "again"]);
      expect(plain.stdout.trimEnd().split("\n").at(-1)).toBe('output    {"said":"hello from piw: again"}');
    },
    SLOW,
  );

  it(
    "run --detach without a terminal prints just the run ID on stdout",
    async () => {
      const detached = await piw(home, ["run", example("hello"), "bye", "--detach"]);
      expect(detached.code).toBe(0);
      expect(detached.stdout).toMatch(/^hello-[A-Za-z0-9._-]+\n$/);
      const runId = detached.stdout.trim();
      expect(detached.stderr).toBe(`follow it with: piw status ${runId}\n`);
      const json = await piw(home, ["run", example("hello"), "bye", "--detach", "--json"]);
      expect(parsed("run", json.stdout)).toMatchObject({ detached: true, view: null, state: null });
    },
    SLOW,
  );

  it(
    "a waiting run exits 3 and its JSON says what it waits for; once answered it names the continuation",
    async () => {
      const waiting = await piw(home, [
        "run",
        example("approval"),
        "--input-json",
        '{"change":"x"}',
        "--json",
      ]);
      expect(waiting.code).toBe(ExitCode.waiting);
      const out = parsed("run", waiting.stdout);
      expect(out.state).toBe("waiting");
      expect(out.view?.checkpoint).toMatchObject({ path: "approve", answeredBy: "human" });
      expect(out.view?.checkpoint?.answerSchema).toMatchObject({ required: ["approved"] });
      const runId = out.runId;

      const waitingList = parsed("list", (await piw(home, ["list", "--status", "waiting", "--json"])).stdout);
      expect(waitingList.runs.map((run) => run.runId)).toEqual([runId]);

      const answered = await piwAtTerminal(home, ["answer", runId, '{"approved": true}', "--json"]);
      expect(answered.code).toBe(ExitCode.ok);
      const next = parsed("answer", answered.stdout);
      expect(next).toMatchObject({ schema: "piw.answer.v1", fromRunId: runId, state: "completed" });

      const [status, statusJson, list] = await Promise.all([
        piw(home, ["status", runId]),
        piw(home, ["status", runId, "--json"]),
        piw(home, ["list"]),
      ]);
      expect(status.stdout).toMatch(new RegExp(`^status +⏸ answered → ${next.runId}$`, "m"));
      expect(status.stdout).not.toContain("answer it with");
      expect(parsed("status", statusJson.stdout).continuedAs).toBe(next.runId);
      expect(list.stdout).toMatch(new RegExp(`^${runId} +approval +⏸ answered → ${next.runId} `, "m"));
    },
    SLOW,
  );

  it(
    "list --status takes every state word piw prints, and refuses others with the words it takes",
    async () => {
      const words = ["completed", "waiting", "timed_out", "timed out", "failed", "done", "queued", "parked"];
      const results = await Promise.all(words.map((word) => piw(home, ["list", "--status", word, "--json"])));
      for (const [i, word] of words.entries()) expect(results[i]?.code, word).toBe(0);
      const completed = parsed("list", results[0]?.stdout ?? "");
      expect(completed.runs.length).toBeGreaterThan(0);
      expect(completed.runs.every((run) => run.outcome === "completed")).toBe(true);
      expect(parsed("list", results[2]?.stdout ?? "").runs).toEqual([]);

      const bad = await piw(home, ["list", "--status", "finished", "--json"]);
      expect(bad.code).toBe(ExitCode.usage);
      expect(bad.stderr).toContain(
        'unknown status "finished"; use queued, starting, running, parked, done, completed, waiting, failed, timed_out, cancelled',
      );
      const error = parsed("error", bad.stdout);
      expect(error).toMatchObject({ schema: "piw.error.v1", exitCode: 64 });
    },
    SLOW,
  );

  it(
    "cancel and pause --json print the run they acted on; restart and resume --json follow like run",
    async () => {
      const follower = spawnPiw(home, ["run", "slow"], { cwd: project });
      const output = collect(follower);
      await waitFor("the slow step to start", () => /▶ wait/.test(output.stdout()));
      const runId = runIdIn(output.stdout());
      const pause = parsed("pause", (await piw(home, ["pause", runId, "--json"])).stdout);
      expect(pause).toMatchObject({ schema: "piw.pause.v1", runId });
      const cancel = parsed("cancel", (await piw(home, ["cancel", runId, "--json"])).stdout);
      expect(cancel).toMatchObject({ schema: "piw.cancel.v1", runId });
      expect((await output).code).toBe(ExitCode.cancelled);

      const failed = await piw(home, ["run", "broken", "--json"], { cwd: project });
      expect(failed.code).toBe(ExitCode.failed);
      const broken = parsed("run", failed.stdout);
      expect(broken.view?.error?.code).toBe("node_failed");
      expect(broken.view?.output).toBeNull();
      const restart = await piw(home, ["restart", broken.runId, "--json"]);
      expect(restart.code).toBe(ExitCode.failed);
      expect(parsed("restart", restart.stdout)).toMatchObject({ fromRunId: broken.runId, state: "failed" });
      const resume = await piw(home, ["resume", broken.runId, "--json"]);
      expect(resume.code).toBe(ExitCode.failed);
      expect(parsed("error", resume.stdout).error.message).toContain(broken.runId);
    },
    SLOW,
  );

  it(
    "workflows lists the project's and the agent folder's workflows and the built-ins with title, input keys, purpose and source",
    async () => {
      const agentDir = join(home, "agent");
      mkdirSync(join(agentDir, "workflows"), { recursive: true });
      writeFileSync(
        join(agentDir, "workflows", "mine.workflow.ts"),
        `import { compute, defineWorkflow } from "piw";\nimport { z } from "zod";\n` +
          `export default defineWorkflow({ name: "mine", title: "My own", input: z.object({ task: z.string(), notes: z.string().optional() }), startAt: "a", nodes: { a: compute({ run: () => 1 }) }, edges: { a: { to: "done" } } });\n`,
      );
      writeFileSync(join(project, ".pi", "workflows", "bad.workflow.ts"), "export default 5;\n");
      const env = { PI_CODING_AGENT_DIR: agentDir };
      const [text, json] = await Promise.all([
        piw(home, ["workflows"], { cwd: project, env }),
        piw(home, ["workflows", "--json"], { cwd: project, env }),
      ]);
      expect(text.code).toBe(0);
      const out = parsed("workflows", json.stdout);
      const byName = new Map(out.workflows.map((workflow) => [workflow.name, workflow]));
      expect([...byName.keys()].sort()).toEqual([
        "autodoc",
        "autoimplement",
        "autoplan",
        "bad",
        "broken",
        "chat",
        "mine",
        "monitor",
        "sanity-check",
        "slow",
        "steps",
      ]);
      expect(byName.get("sanity-check")).toMatchObject({
        title: "Sanity check of a change",
        source: { kind: "builtin", path: null },
        input: { keys: ["focus", "base", "mode", "failOn"], required: [] },
        textInput: "focus",
        summary: expect.stringContaining("verdict"),
        problem: null,
      });
      expect(byName.get("autoplan")).toMatchObject({
        title: "Plan a change",
        source: { kind: "builtin", path: null },
        input: { keys: ["problem", "scope", "constraints", "planFile", "approval"], required: ["problem"] },
        textInput: "problem",
        summary: expect.stringContaining("plan as a markdown file"),
        problem: null,
      });
      expect(byName.get("autodoc")).toMatchObject({
        title: "Update the documentation for a change",
        source: { kind: "builtin", path: null },
        input: { keys: ["task", "plan", "documents", "workspace", "base", "from"], required: ["task"] },
        textInput: "task",
        summary: expect.stringContaining("verify every changed claim"),
        problem: null,
      });
      expect(byName.get("autoimplement")).toMatchObject({
        title: "Implement a plan",
        source: { kind: "builtin", path: null },
        input: {
          keys: [
            "task",
            "plan",
            "baseBranch",
            "branch",
            "workspace",
            "checks",
            "approval",
            "maxRounds",
            "merge",
            "publish",
          ],
          required: ["task"],
        },
        textInput: "task",
        problem: null,
      });
      expect(byName.get("monitor")).toMatchObject({
        title: "Monitor a goal",
        source: { kind: "builtin", path: null },
        input: {
          keys: [
            "task",
            "check",
            "everyMinutes",
            "maxChecks",
            "stopWhen",
            "deadline",
            "allow",
            "publish",
            "merge",
            "limits",
            "checkTimeoutMinutes",
          ],
          required: ["task"],
        },
        textInput: "task",
        problem: null,
      });
      expect(byName.get("mine")).toMatchObject({ textInput: "task", summary: null });
      expect(byName.get("mine")).toMatchObject({
        title: "My own",
        source: { kind: "global", path: join(agentDir, "workflows", "mine.workflow.ts") },
        input: { keys: ["task", "notes"], required: ["task"] },
        problem: null,
      });
      expect(byName.get("slow")).toMatchObject({ source: { kind: "project" }, takesInput: false });
      expect(byName.get("bad")?.problem).toContain("export default defineWorkflow");
      expect(text.stdout).toMatch(/^mine +My own +task, notes\? +global$/m);
      expect(text.stdout).toMatch(/^bad +\(cannot start\)/m);
      expect(text.stdout).toMatch(
        /^sanity-check +Sanity check of a change +focus <words>\?, base\?, mode\?, failOn\? +builtin/m,
      );
      expect(text.stdout).toMatch(
        /^autoplan +Plan a change +problem <words>, scope\?, constraints\?, planFile\?, approval\? +builtin/m,
      );
      rmSync(join(project, ".pi", "workflows", "bad.workflow.ts"));
    },
    SLOW,
  );
});
