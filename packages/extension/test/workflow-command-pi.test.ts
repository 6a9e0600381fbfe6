import { existsSync, mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ExtensionAPI, ExtensionCommandContext } from "@earendil-works/pi-coding-agent";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { piwExtension } from "../src/index.js";
import { SessionBridge } from "../src/session-bridge.js";
import { HOST_COMMAND, PREFLIGHT_COMMAND, removeTree, sourceWorkerEnv, stopHostProcess } from "@piw/test-kit";

// `/workflow` as Pi runs it: the extension's registered command handler, a real host and worker as
// separate processes; only Pi itself is played by the test.
const SESSION = "session-under-test";

// Its output is the task it was given, so the test sees exactly what the command passed on.
const TIDY = `import { compute, defineWorkflow } from "piw";
import { z } from "zod";
export default defineWorkflow({
  name: "tidy",
  input: z.object({ task: z.string() }),
  startAt: "echo",
  nodes: { echo: compute({ run: ({ input }) => input.task }) },
  edges: { echo: { to: "done" } },
});
`;

// An agent step waits for Pi's turn: the run stays active until the test acts on it.
const ASK = `import { agent, defineWorkflow } from "piw";
import { z } from "zod";
export default defineWorkflow({
  name: "ask",
  startAt: "question",
  nodes: { question: agent({ prompt: () => "Answer.", output: z.object({ answer: z.string() }) }) },
  edges: { question: { to: "done" } },
});
`;

type Handler = (...args: never[]) => unknown;
type Completions = (prefix: string) => Promise<Array<{ value: string }> | null>;

interface PiStub {
  command(args: string): Promise<void>;
  complete(prefix: string): Promise<string[]>;
  notes: Array<{ text: string; level: string }>;
  shutdown(): Promise<void>;
}

/** The parts of Pi the extension uses: registration, events, and a command context with a UI. */
function loadExtension(stateDir: string, cwd: string): PiStub {
  const commands = new Map<
    string,
    {
      handler: (args: string, ctx: ExtensionCommandContext) => Promise<void>;
      getArgumentCompletions?: Completions;
    }
  >();
  const events = new Map<string, Handler>();
  const entries: unknown[] = [];
  const pi = {
    registerTool() {},
    registerMessageRenderer() {},
    registerShortcut() {},
    registerCommand(
      name: string,
      spec: {
        handler: (args: string, ctx: ExtensionCommandContext) => Promise<void>;
        getArgumentCompletions?: Completions;
      },
    ) {
      commands.set(name, spec);
    },
    on(event: string, handler: Handler) {
      events.set(event, handler);
    },
    sendMessage(message: unknown) {
      entries.push(message);
    },
  } as unknown as ExtensionAPI;
  piwExtension({ hostCommand: HOST_COMMAND, stateDir, preflightCommand: PREFLIGHT_COMMAND })(pi);
  const notes: PiStub["notes"] = [];
  const ctx = {
    cwd,
    sessionManager: { getSessionId: () => SESSION, getEntries: () => entries },
    isIdle: () => true,
    hasPendingMessages: () => false,
    ui: {
      notify(text: string, level: string) {
        notes.push({ text, level });
      },
      setWidget() {},
      setStatus() {},
    },
  } as unknown as ExtensionCommandContext;
  return {
    notes,
    async command(args) {
      const workflow = commands.get("workflow");
      if (!workflow) throw new Error("the extension registered no /workflow command");
      await workflow.handler(args, ctx);
    },
    async complete(prefix) {
      const complete = commands.get("workflow")?.getArgumentCompletions;
      if (!complete) throw new Error("the /workflow command offers no completions");
      return ((await complete(prefix)) ?? []).map((item) => item.value);
    },
    async shutdown() {
      await (events.get("session_shutdown") as (() => Promise<void>) | undefined)?.();
    },
  };
}

let root: string;
let stubs: PiStub[] = [];
let bridges: SessionBridge[] = [];
beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), "piw-ext-command-"));
  mkdirSync(join(root, "project", ".pi", "workflows"), { recursive: true });
  writeFileSync(join(root, "project", ".pi", "workflows", "tidy.workflow.ts"), TIDY);
  writeFileSync(join(root, "project", ".pi", "workflows", "ask.workflow.ts"), ASK);
  Object.assign(process.env, sourceWorkerEnv());
});

afterEach(async () => {
  let hostPid: number | undefined;
  for (const bridge of bridges) {
    hostPid ??= (await bridge.host.call("host.status", {}).catch(() => undefined))?.pid;
    await bridge.shutdown();
  }
  for (const stub of stubs) await stub.shutdown();
  if (hostPid !== undefined) await stopHostProcess(hostPid);
  stubs = [];
  bridges = [];
  removeTree(root);
});

function extension(): PiStub {
  const stub = loadExtension(join(root, "state"), join(root, "project"));
  stubs.push(stub);
  return stub;
}

describe("/workflow through the extension's command", () => {
  it("starts a workflow with free-text task words, apostrophes included, passed on verbatim", async () => {
    const pi = extension();
    await pi.command("tidy don't touch the tests");
    const queued = pi.notes.at(0);
    expect(queued?.level).toBe("info");
    const runId = /\(run ([^)]+)\)/.exec(queued?.text ?? "")?.[1];
    expect(runId, queued?.text).toBeDefined();

    // A second client of the same host reads what the run did with the task.
    const reader = new SessionBridge({} as ExtensionAPI, {
      hostCommand: HOST_COMMAND,
      stateDir: join(root, "state"),
    });
    bridges.push(reader);
    for (let i = 0; i < 400; i += 1) {
      const history = await reader.host.call("runs.history", { runId: runId as string });
      const echoed = history?.steps.find((step) => step.path === "echo" && step.status === "succeeded");
      if (echoed !== undefined) {
        expect(echoed.output).toBe("don't touch the tests");
        return;
      }
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error("the run did not echo its task");
  }, 60_000);

  it("adds, lists and triggers a schedule; its runs are the user's, headless, not this session's", async () => {
    // The host prepares a firing's run in the preflight child, from source here.
    process.env.PIW_PREFLIGHT_COMMAND = JSON.stringify(PREFLIGHT_COMMAND);
    const pi = extension();
    await pi.command("schedule add tidy");
    expect(pi.notes.at(-1)?.level).toBe("error");
    expect(pi.notes.at(-1)?.text).toContain("a schedule needs every <duration> or cron <expr>");
    await pi.command(
      'schedule add tidy --cron "0 9 * * 1-5" --tz Europe/Berlin --name tidy-weekdays tidy up',
    );
    expect(pi.notes.at(-1)).toMatchObject({ level: "info" });
    expect(pi.notes.at(-1)?.text).toContain("Schedule tidy-weekdays added: next firing");
    await pi.command("schedule list");
    expect(pi.notes.at(-1)?.text).toContain('- tidy-weekdays: tidy, cron "0 9 * * 1-5" Europe/Berlin, next ');
    await pi.command("schedule trigger tidy-weekdays");
    const runId = /fired: run ([^ ]+)\.$/.exec(pi.notes.at(-1)?.text ?? "")?.[1];
    expect(runId, pi.notes.at(-1)?.text).toBeDefined();

    const reader = new SessionBridge({} as ExtensionAPI, {
      hostCommand: HOST_COMMAND,
      stateDir: join(root, "state"),
    });
    bridges.push(reader);
    const view = await reader.host.call("runs.get", { runId: runId as string });
    expect(view?.origin).toMatchObject({ kind: "schedule", scheduleId: "tidy-weekdays" });
    expect(await reader.host.call("runs.list", { sessionId: SESSION })).toEqual([]);
    for (let i = 0; i < 400; i += 1) {
      const history = await reader.host.call("runs.history", { runId: runId as string });
      const echoed = history?.steps.find((step) => step.path === "echo" && step.status === "succeeded");
      if (echoed !== undefined) {
        expect(echoed.output).toBe("tidy up");
        await pi.command("schedule delete tidy-weekdays");
        expect(pi.notes.at(-1)?.text).toBe("Schedule tidy-weekdays deleted; its runs stay.");
        return;
      }
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error("the scheduled run did not echo its task");
  }, 90_000);
  afterEach(() => {
    delete process.env.PIW_PREFLIGHT_COMMAND;
  });

  it("answers a subcommand that needs its run ID with what to type, and starts no host", async () => {
    const pi = extension();
    await pi.command("restart");
    await pi.command("answer");
    await pi.command("submit");
    expect(pi.notes.map((note) => note.level)).toEqual(["error", "error", "error"]);
    for (const [i, verb] of ["restart", "answer", "submit"].entries()) {
      const text = pi.notes[i]?.text ?? "";
      expect(text).toContain(`Usage: /workflow ${verb} `);
      expect(text).not.toMatch(/expected|received|undefined/i);
    }
    expect(existsSync(join(root, "state", "host.sock"))).toBe(false);
  });

  it("cancels the session's active run when no run ID is given, and says what is missing when there is none", async () => {
    const pi = extension();
    for (const verb of ["cancel", "pause", "resume"]) await pi.command(verb);
    expect(pi.notes.map((note) => note.level)).toEqual(["error", "error", "error"]);
    expect(pi.notes[0]?.text).toBe(
      "This Pi session has no active workflow run to cancel; nothing was done. Give the run's ID: /workflow cancel <runId> (/workflow list shows the run IDs).",
    );
    expect(pi.notes[2]?.text).toContain("has no parked workflow run to resume");

    // The first word completes to the workflows found here.
    expect(await pi.complete("as")).toEqual(["ask "]);
    await pi.command("ask");
    const runId = /\(run ([^)]+)\)/.exec(pi.notes.at(-1)?.text ?? "")?.[1] as string;
    expect(runId, pi.notes.at(-1)?.text).toBeDefined();
    const reader = new SessionBridge({} as ExtensionAPI, {
      hostCommand: HOST_COMMAND,
      stateDir: join(root, "state"),
    });
    bridges.push(reader);
    // It started (the command line was idle) and waits at its agent step.
    for (let i = 0; i < 400; i += 1) {
      if ((await reader.host.call("runs.get", { runId }))?.status === "running") break;
      await new Promise((r) => setTimeout(r, 50));
    }
    expect((await reader.host.call("runs.get", { runId }))?.status).toBe("running");
    expect(await pi.complete("cancel ")).toEqual([`cancel ${runId}`]);
    expect(await pi.complete("resume ")).toEqual([]);

    await pi.command("cancel");
    expect(pi.notes.at(-1)).toEqual({
      level: "info",
      text: expect.stringContaining(`Run ${runId} cancelled.`),
    });
    expect((await reader.host.call("runs.get", { runId }))?.status).toBe("cancelled");
    // Nothing is active now: the same line changes nothing and says so.
    await pi.command("cancel");
    expect(pi.notes.at(-1)?.text).toContain("has no active workflow run to cancel; nothing was done.");
    await pi.command("status");
    expect(pi.notes.at(-1)?.text).toContain(`run ${runId} is cancelled`);
  }, 60_000);
});
