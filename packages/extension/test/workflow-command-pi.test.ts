import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import type { ExtensionAPI, ExtensionCommandContext } from "@earendil-works/pi-coding-agent";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { piwExtension } from "../src/index.js";
import { SessionBridge } from "../src/session-bridge.js";

// `/workflow` as Pi runs it: the extension's registered command handler, a real host and worker as
// separate processes; only Pi itself is played by the test.
const REPO = resolve(import.meta.dirname, "../../..");
const TSX = join(REPO, "node_modules/tsx/dist/loader.mjs");
const HOST_COMMAND = [process.execPath, "--import", TSX, join(REPO, "apps/host/src/main.ts")];
const WORKER_COMMAND = [process.execPath, "--import", TSX, join(REPO, "apps/worker/src/main.ts")];
const PREFLIGHT_COMMAND = [process.execPath, "--import", TSX, join(REPO, "apps/worker/src/preflight.ts")];
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

type Handler = (...args: never[]) => unknown;

interface PiStub {
  command(args: string): Promise<void>;
  notes: Array<{ text: string; level: string }>;
  shutdown(): Promise<void>;
}

/** The parts of Pi the extension uses: registration, events, and a command context with a UI. */
function loadExtension(stateDir: string, cwd: string): PiStub {
  const commands = new Map<
    string,
    { handler: (args: string, ctx: ExtensionCommandContext) => Promise<void> }
  >();
  const events = new Map<string, Handler>();
  const entries: unknown[] = [];
  const pi = {
    registerTool() {},
    registerCommand(
      name: string,
      spec: { handler: (args: string, ctx: ExtensionCommandContext) => Promise<void> },
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
  process.env.PIW_WORKER_COMMAND = JSON.stringify(WORKER_COMMAND);
  process.env.TSX_TSCONFIG_PATH = join(REPO, "tsconfig.json");
});

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

afterEach(async () => {
  let hostPid: number | undefined;
  for (const bridge of bridges) {
    hostPid ??= (await bridge.host.call("host.status", {}).catch(() => undefined))?.pid;
    await bridge.shutdown();
  }
  for (const stub of stubs) await stub.shutdown();
  if (hostPid !== undefined) {
    try {
      process.kill(hostPid, "SIGTERM");
      for (let i = 0; i < 200 && alive(hostPid); i += 1) await new Promise((r) => setTimeout(r, 50));
    } catch {
      // Already gone.
    }
  }
  stubs = [];
  bridges = [];
  rmSync(root, { recursive: true, force: true, maxRetries: 20, retryDelay: 100 });
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

  it("answers a subcommand without its run ID with what to type, and starts no host", async () => {
    const pi = extension();
    for (const verb of ["cancel", "pause", "resume", "restart"]) await pi.command(verb);
    await pi.command("answer");
    await pi.command("submit");
    expect(pi.notes.map((note) => note.level)).toEqual([
      "error",
      "error",
      "error",
      "error",
      "error",
      "error",
    ]);
    for (const [i, verb] of ["cancel", "pause", "resume", "restart", "answer", "submit"].entries()) {
      const text = pi.notes[i]?.text ?? "";
      expect(text).toContain(`Usage: /workflow ${verb} `);
      expect(text).not.toMatch(/expected|received|undefined/i);
    }
    expect(existsSync(join(root, "state", "host.sock"))).toBe(false);
  });
});
