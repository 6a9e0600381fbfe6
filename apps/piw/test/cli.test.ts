import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { RunSummary, RunView } from "@piw/protocol";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hostPidIn, isAlive, removeTree, waitFor } from "@piw/test-kit";
import {
  cleanUp,
  collect,
  example,
  hasColour,
  makeHome,
  makeProject,
  piw,
  piwAtTerminal,
  piwInProcess,
  repo,
  runIdIn,
  spawnPiw,
  spawnPiwInTerminal,
  withoutAnsi,
} from "./cli-harness.js";

// Every test here drives the real CLI, host and worker processes from source.
const SLOW = 120_000;

describe("piw preflight: nothing is recorded when it fails", () => {
  let home: string;
  beforeAll(() => {
    home = makeHome();
  });
  afterAll(() => cleanUp(home));

  const nothingRecorded = () => {
    expect(readdirSync(home)).toEqual([]);
    expect(hostPidIn(home)).toBeUndefined();
  };

  it(
    "refuses a workflow with an agent step pinned to the Pi conversation without starting a host",
    async () => {
      const project = makeProject();
      const result = await piw(home, ["run", "chat"], { cwd: project });
      removeTree(project);
      expect(result.code).toBe(64);
      expect(result.stderr).toContain(
        "workflow chat has agent steps that run in the Pi conversation (ask): start it from Pi with /workflow chat",
      );
      expect(result.stderr).not.toMatch(/\n\s+at /);
      nothingRecorded();
    },
    SLOW,
  );

  it(
    "refuses a --budget it cannot read before anything starts, naming the limit and never the value",
    async () => {
      const [bad, unknown] = await Promise.all([
        piwInProcess(home, ["run", example("hello"), "hi", "--budget", "tokens=sk-SECRET-42"]),
        piwInProcess(home, ["run", example("hello"), "hi", "--budget", "sk-SECRET-42=1"]),
      ]);
      expect(bad.code).toBe(64);
      expect(bad.stderr).toContain("Invalid --budget: tokens takes a whole number above 0");
      expect(unknown.code).toBe(64);
      expect(unknown.stderr).toContain("the limits are usd, tokens, agentTurns, wallMs");
      expect(bad.stderr + unknown.stderr).not.toContain("SECRET");
      nothingRecorded();
    },
    SLOW,
  );

  it(
    "refuses invalid --input-json, an input the schema rejects, and both kinds of input at once",
    async () => {
      const [badJson, rejected, missing, both] = await Promise.all([
        piw(home, ["run", example("hello"), "--input-json", "{task:"]),
        piwInProcess(home, ["run", example("approval"), "--input-json", '{"change": 7}']),
        piwInProcess(home, ["run", example("hello")]),
        piwInProcess(home, ["run", example("hello"), "hi", "--input-json", "{}"]),
      ]);
      expect(badJson.code).toBe(64);
      expect(badJson.stderr).toContain("--input-json is not valid JSON");

      expect(rejected.code).toBe(64);
      expect(rejected.stderr).toContain("does not match workflow approval's input");
      expect(rejected.stderr).toMatch(/^\s+change: /m);

      expect(missing.code).toBe(64);
      expect(missing.stderr).toMatch(/^\s+task: /m);

      expect(both.code).toBe(64);
      nothingRecorded();
    },
    SLOW,
  );

  it(
    "refuses input keys the workflow's schema does not have, naming the keys it has",
    async () => {
      const [taskWords, misspelled] = await Promise.all([
        piwInProcess(home, ["run", example("approval"), "bump", "zod"]),
        piwInProcess(home, ["run", example("hello"), "--input-json", '{"tsak": "hi"}']),
      ]);
      expect(taskWords.code).toBe(64);
      expect(taskWords.stderr).toBe(
        "piw: workflow approval takes no task words; its input keys are: change (required)\n" +
          "  give the whole input as JSON instead\n",
      );
      expect(misspelled.code).toBe(64);
      expect(misspelled.stderr).toContain(`workflow hello's input has no "tsak"; its input keys are: task`);
      nothingRecorded();
    },
    SLOW,
  );

  it(
    "names a workflow it cannot find, and unknown commands and options, in one short line",
    async () => {
      const [notFound, unknown, option] = await Promise.all([
        piwInProcess(home, ["run", "no-such-workflow"]),
        piwInProcess(home, ["frobnicate"]),
        piwInProcess(home, ["list", "--nope"]),
      ]);
      // A name that finds no workflow is a mistake in the command: a usage error like bad input.
      expect(notFound.code).toBe(64);
      expect(notFound.stderr).toContain('workflow "no-such-workflow" not found');
      expect(unknown.code).toBe(64);
      expect(option.code).toBe(64);
      expect(option.stderr).toContain("see piw list --help");
      nothingRecorded();
    },
    SLOW,
  );

  it(
    "exits 69 when no host can be started, and 64 for a malformed PIW_HOST_COMMAND",
    async () => {
      const [dead, malformed] = await Promise.all([
        piw(home, ["list"], {
          env: { PIW_HOST_COMMAND: JSON.stringify([process.execPath, "-e", "process.exit(2)"]) },
        }),
        piw(home, ["list"], { env: { PIW_HOST_COMMAND: "node host.js" } }),
      ]);
      expect(dead.code).toBe(69);
      expect(dead.stderr).toContain(`no host at ${join(home, "host.sock")}`);
      expect(dead.stderr).toContain("exited with code 2");
      expect(malformed.code).toBe(64);
      expect(malformed.stderr).toContain("PIW_HOST_COMMAND must be a JSON array");
      nothingRecorded();
    },
    SLOW,
  );

  it("prints the version of its package for --version and -V, and nothing else", async () => {
    const { version } = JSON.parse(readFileSync(join(repo, "apps/piw/package.json"), "utf8")) as {
      version: string;
    };
    for (const flag of ["--version", "-V"]) {
      const result = await piwInProcess(home, [flag]);
      expect(result.code, flag).toBe(0);
      expect(result.stdout, flag).toBe(`${version}\n`);
    }
    nothingRecorded();
  });

  it(
    "prints help for piw and for every command",
    async () => {
      const main = await piw(home, ["--help"]);
      expect(main.stdout).toContain("Commands:");
      expect(main.code).toBe(0);
      expect(main.stdout).toContain("Exit codes:");
      const commands = ["run", "list", "status", "cancel", "pause", "answer", "restart", "resume", "host"];
      const helps = await Promise.all(commands.map((command) => piwInProcess(home, [command, "--help"])));
      commands.forEach((command, i) => {
        expect(helps[i]?.code, command).toBe(0);
        expect(helps[i]?.stdout, command).toMatch(new RegExp(`^Usage: piw ${command}`));
      });
      nothingRecorded();
    },
    SLOW,
  );
});

describe("piw with a host", () => {
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

  let helloRun = "";

  it(
    "runs hello from a path, auto-starting the host, with one line per node and exit 0",
    async () => {
      const result = await piw(home, ["run", example("hello"), "say", "hi"]);
      expect(result.stderr).toBe("");
      expect(result.code).toBe(0);
      helloRun = runIdIn(result.stdout);
      const lines = result.stdout.trimEnd().split("\n");
      expect(lines[0]).toMatch(/^hello \(Say hello\) {2}run hello-/);
      expect(lines).toContainEqual(expect.stringMatching(/^ {2}✓ greet +compute +#1 +\d+ms$/));
      expect(lines).toContainEqual(expect.stringMatching(/^ {2}✓ echo +shell +#1 +\d+(ms|\.\ds)$/));
      expect(lines.at(-2)).toMatch(new RegExp(`^✓ hello completed in \\S+ {2}${helloRun}$`));
      // The run's final output closes it, on one line when it is short.
      expect(lines.at(-1)).toBe('output    {"said":"hello from piw: say hi"}');
      expect(hasColour(result.stdout)).toBe(false);
      const pid = hostPidIn(home);
      expect(pid !== undefined && isAlive(pid)).toBe(true);
    },
    SLOW,
  );

  it(
    "lists and shows runs as JSON, and as text",
    async () => {
      const [list, filteredList, status, text, listText] = await Promise.all([
        piw(home, ["list", "--json"]),
        piw(home, ["list", "--status", "failed,cancelled", "--json"]),
        piw(home, ["status", helloRun, "--json"]),
        piw(home, ["status", helloRun]),
        piw(home, ["list"]),
      ]);
      expect(list.code).toBe(0);
      const runs = (JSON.parse(list.stdout) as { runs: RunSummary[] }).runs;
      expect(runs.find((r) => r.runId === helloRun)).toMatchObject({ status: "done", outcome: "completed" });
      expect(JSON.parse(filteredList.stdout).runs).toEqual([]);

      expect(status.code).toBe(0);
      const view = JSON.parse(status.stdout) as RunView;
      expect(view.runId).toBe(helloRun);
      expect(view.nodes.map((n) => [n.path, n.state])).toEqual([
        ["greet", "succeeded"],
        ["echo", "succeeded"],
      ]);
      expect(text.stdout).toMatch(/^status +✓ completed$/m);
      expect(listText.stdout).toMatch(new RegExp(`^${helloRun} +hello +✓ completed`, "m"));
    },
    SLOW,
  );

  it(
    "answers unknown run IDs with a clear error and exit 1",
    async () => {
      const attempts = [
        ["status", "nope-123"],
        ["cancel", "nope-123"],
        ["answer", "nope-123", "{}"],
      ];
      // `piw answer` runs only from a terminal, as a person's.
      const run = (args: string[]) => (args[0] === "answer" ? piwAtTerminal(home, args) : piw(home, args));
      const results = await Promise.all(attempts.map(run));
      for (const [i, args] of attempts.entries()) {
        const result = results[i] ?? { code: null, stderr: "" };
        expect(result.code, args.join(" ")).toBe(1);
        expect(result.stderr, args.join(" ")).toMatch(/^piw: .*nope-123/);
        expect(result.stderr.trim().split("\n")).toHaveLength(1);
      }
    },
    SLOW,
  );

  it(
    "stops at a checkpoint with exit 3, and `piw answer` follows the continuation to completion",
    async () => {
      const waiting = await piw(home, ["run", example("approval"), "--input-json", '{"change":"bump zod"}']);
      expect(waiting.code).toBe(3);
      const runId = runIdIn(waiting.stdout);
      expect(waiting.stdout).toMatch(/^⏸ approval waiting at approve/m);
      // The hint's answer is generated from the checkpoint's schema, and is one it accepts.
      expect(waiting.stdout).toContain(`piw answer ${runId} '{"approved":true}'`);

      const status = await piw(home, ["status", runId]);
      expect(status.stdout).toMatch(
        /^asks {6}Approve the plan: \{"steps":\["apply bump zod","verify"\]\}\?$/m,
      );
      expect(status.stdout).toMatch(/^answers {3}a person$/m);
      expect(status.stdout).toContain(`answer it with: piw answer ${runId} '{"approved":true}'`);
      const json = await piw(home, ["status", runId, "--json"]);
      expect(JSON.parse(json.stdout).checkpoint).toEqual({
        path: "approve",
        visit: 1,
        prompt: 'Approve the plan: {"steps":["apply bump zod","verify"]}?',
        answeredBy: "human",
        answerSchema: {
          type: "object",
          properties: { approved: { type: "boolean" }, comment: { type: "string" } },
          required: ["approved"],
        },
      });

      const badAnswer = await piwAtTerminal(home, ["answer", runId, "{approved"]);
      expect(badAnswer.code).toBe(64);

      const wrongShape = await piwAtTerminal(home, ["answer", runId, '{"approved": "yes"}']);
      expect(wrongShape.code).toBe(64);
      expect(wrongShape.stderr).toContain("approved");
      // The host refused it before saving anything (the CLI no longer checks answers itself).
      expect(wrongShape.stderr).toContain("Nothing was saved");
      const answered = await piwAtTerminal(home, ["answer", runId, '{"approved": true}']);
      expect(answered.stderr).toBe("");
      expect(answered.code).toBe(0);
      expect(answered.stdout).toContain(`continuing ${runId} as run`);
      expect(answered.stdout).toMatch(/^ {2}✓ apply +compute/m);
      expect(answered.stdout).toMatch(/^✓ approval completed/m);
    },
    SLOW,
  );

  it(
    "exits 1 with the error when a run fails, and `piw restart` runs it again",
    async () => {
      const failed = await piw(home, ["run", "broken"], { cwd: project });
      expect(failed.code).toBe(1);
      expect(failed.stdout).toMatch(/^ {2}✗ fail +shell +#1 .*failed/m);
      expect(failed.stdout).toMatch(/^✗ broken failed: node_failed: /m);
      const runId = runIdIn(failed.stdout);

      const restarted = await piw(home, ["restart", runId]);
      expect(restarted.code).toBe(1);
      expect(restarted.stdout).toContain(`restarting ${runId} as run`);
      expect(restarted.stdout).toMatch(/^✗ broken failed/m);
    },
    SLOW,
  );

  it(
    "`piw cancel` ends a followed run, which then exits 4",
    async () => {
      const follower = spawnPiw(home, ["run", "slow"], { cwd: project });
      const output = collect(follower);
      await waitFor("the slow step to start", () => /▶ wait/.test(output.stdout()));
      const runId = runIdIn(output.stdout());
      const cancel = await piw(home, ["cancel", runId]);
      expect(cancel.code).toBe(0);
      expect(cancel.stdout).toContain(runId);
      const result = await output;
      expect(result.code).toBe(4);
      expect(result.stdout).toMatch(/^■ slow cancelled/m);
      const view = JSON.parse((await piw(home, ["status", runId, "--json"])).stdout) as RunView;
      expect(view.status).toBe("cancelled");
      // The step under way when the run was cancelled says so, not `pending`.
      expect(view.nodes.map((node) => [node.path, node.state])).toEqual([
        ["first", "succeeded"],
        ["wait", "cancelled"],
      ]);
      const text = await piw(home, ["status", runId]);
      expect(text.stdout).toMatch(/^ {2}■ wait +shell +#1 +.*cancelled$/m);
    },
    SLOW,
  );

  it(
    "`piw pause` parks a followed run at the next node boundary (exit 5); `piw resume` finishes it without redoing the saved node",
    async () => {
      const follower = spawnPiw(home, ["run", "steps"], { cwd: project });
      const output = collect(follower);
      await waitFor("the command to start", () => /▶ work/.test(output.stdout()));
      const runId = runIdIn(output.stdout());
      const pause = await piw(home, ["pause", runId]);
      expect(pause.code).toBe(0);
      expect(pause.stdout).toContain(`pause requested for ${runId} (running)`);
      writeFileSync(join(project, "release"), "");
      const parked = await output;
      expect(parked.code).toBe(5);
      expect(parked.stdout).toMatch(/^ {2}✓ work +shell +#1/m);
      expect(parked.stdout).not.toMatch(/after +compute/);
      expect(parked.stdout).toMatch(/^‼ steps parked: .*\(paused\)/m);
      const view = JSON.parse((await piw(home, ["status", runId, "--json"])).stdout) as RunView;
      expect(view.status).toBe("parked");
      expect(view.recoveryReason?.code).toBe("paused");

      const again = await piw(home, ["pause", runId]);
      expect(again.code).toBe(0);
      expect(again.stdout).toContain(`paused ${runId}; go on with: piw resume ${runId}`);

      const resumed = await piw(home, ["resume", runId]);
      expect(resumed.code).toBe(0);
      expect(resumed.stdout).toMatch(/^ {2}✓ after +compute +#1/m);
      expect(resumed.stdout).not.toMatch(/▶ work/);
      const done = JSON.parse((await piw(home, ["status", runId, "--json"])).stdout) as RunView;
      expect(done.nodes.find((node) => node.path === "work")?.visits).toBe(1);
    },
    SLOW,
  );

  it(
    "`piw pause` of a finished or unknown run is refused and changes nothing",
    async () => {
      const done = await piw(home, ["run", example("hello"), "hi"]);
      expect(done.code).toBe(0);
      const runId = runIdIn(done.stdout);
      const refused = await piw(home, ["pause", runId]);
      expect(refused.code).toBe(1);
      expect(refused.stderr).toContain(runId);
      expect(refused.stderr).not.toMatch(/\n\s+at /);
      const view = JSON.parse((await piw(home, ["status", runId, "--json"])).stdout) as RunView;
      expect(view.status).toBe("done");
      const unknown = await piw(home, ["pause", "nope-123"]);
      expect(unknown.code).not.toBe(0);
      expect(unknown.stderr).toContain("nope-123");
    },
    SLOW,
  );

  it(
    "Ctrl-C without a terminal detaches, prints the run ID and leaves the run going",
    async () => {
      const follower = spawnPiw(home, ["run", "slow"], { cwd: project });
      const output = collect(follower);
      await waitFor("the slow step to start", () => /▶ wait/.test(output.stdout()));
      const runId = runIdIn(output.stdout());
      follower.kill("SIGINT");
      const result = await output;
      expect(result.code).toBe(130);
      expect(result.stderr).toContain(`piw status ${runId}`);
      const view = JSON.parse((await piw(home, ["status", runId, "--json"])).stdout) as RunView;
      expect(view.status).toBe("running");
      expect((await piw(home, ["cancel", runId])).code).toBe(0);
    },
    SLOW,
  );

  it(
    "Ctrl-C in a terminal asks; c cancels the run (exit 4), and NO_COLOR keeps colour off",
    async () => {
      const terminal = spawnPiwInTerminal(home, ["run", "slow"], { cwd: project });
      const output = collect(terminal);
      await waitFor("the slow step to start", () => /▶ wait/.test(output.stdout()));
      terminal.stdin?.write("\x03");
      await waitFor("the question", () => output.stdout().includes("cancel the run or detach? [c/d]"));
      terminal.stdin?.write("c\r");
      const result = await output;
      // On a failure, the terminal transcript says whether piw detached or died of a signal.
      expect(result.code, `terminal transcript:\n${withoutAnsi(result.stdout)}\n${result.stderr}`).toBe(4);
      expect(result.stdout).toMatch(/^■ slow cancelled/m);
      // Readline moves the cursor, but nothing is coloured.
      expect(hasColour(result.stdout)).toBe(false);
    },
    SLOW,
  );

  it(
    "Ctrl-C in a terminal, then d, detaches (exit 130); output is coloured on a terminal",
    async () => {
      const terminal = spawnPiwInTerminal(home, ["run", "slow"], { cwd: project, env: { NO_COLOR: "" } });
      const output = collect(terminal);
      await waitFor("the slow step to start", () => /▶ wait/.test(withoutAnsi(output.stdout())));
      expect(hasColour(output.stdout())).toBe(true);
      terminal.stdin?.write("\x03");
      await waitFor("the question", () => output.stdout().includes("[c/d]"));
      terminal.stdin?.write("d\r");
      const result = await output;
      expect(result.code).toBe(130);
      const runId = runIdIn(withoutAnsi(result.stdout));
      expect(withoutAnsi(result.stdout)).toContain(`follow it with: piw status ${runId}`);
      expect((await piw(home, ["cancel", runId])).code).toBe(0);
    },
    SLOW,
  );

  it(
    "shows and stops the host; host status exits 69 once it is gone",
    async () => {
      const status = await piw(home, ["host", "status", "--json"]);
      expect(status.code).toBe(0);
      const info = JSON.parse(status.stdout) as { running: boolean; pid: number; stateDir: string };
      expect(info).toMatchObject({ running: true, pid: hostPidIn(home), stateDir: home });

      const stop = await piw(home, ["host", "stop"]);
      expect(stop.code).toBe(0);
      expect(stop.stdout).toContain(`host stopped (pid ${info.pid})`);
      expect(isAlive(info.pid)).toBe(false);

      const after = await piw(home, ["host", "status", "--json"]);
      expect(after.code).toBe(69);
      expect(JSON.parse(after.stdout)).toEqual({
        schema: "piw.host-status.v1",
        running: false,
        stateDir: home,
      });
      expect(existsSync(join(home, "state.db"))).toBe(true);
    },
    SLOW,
  );
});
