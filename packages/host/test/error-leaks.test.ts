import { randomBytes } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { RunView } from "@piw/protocol";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunningHost } from "../src/index.js";
import { type Sandbox, sandbox, start, TestClient, TSX_ENV, writeWorkflow } from "./host-fixture.js";

// Every way workflow code can fail, each fed a canary of its own from the input, the environment or an
// effect's result. The input carries the canary reversed and the workflow turns it back, so the canary
// itself is never stored as input: any copy of it in the database, a view, the history or a message is
// a leak. The environment holds each mode's canary as PIW_LEAK_<mode>. 18 characters: V8 quotes a
// string of up to 20 whole in a JSON.parse error, and cuts a longer one to its first 10.
const canaries = new Map<string, string>();
function canaryOf(mode: string): string {
  let canary = canaries.get(mode);
  if (canary === undefined) {
    canary = `CANARY${randomBytes(6).toString("hex")}`;
    canaries.set(mode, canary);
  }
  return canary;
}

function reversed(text: string): string {
  return [...text].reverse().join("");
}

const LEAK_FLOW = `import { action, checkpoint, compute, decision, decisionEdge, defineWorkflow, includeWorkflow, shell, WorkflowError } from "piw";
import { z } from "zod";

const secret = (input) => [...input.hidden].reverse().join("");
const echo = { error: (issue) => "bad " + String(issue.input) };

const child = defineWorkflow({
  name: "leakchild",
  input: z.strictObject({ value: z.string().refine(() => false, echo) }),
  startAt: "use",
  nodes: { use: compute({ run: () => 1 }) },
  edges: { use: { to: "done" } },
});

const MODES = [
  "throwError", "reject", "throwString", "throwObject", "jsonInput", "jsonEnv", "zodRefine", "zodKeys",
  "shellExit", "shellSpawn", "shellParse", "effectThrow", "effectResult", "include", "route",
  "checkpointPrompt", "uncaught", "authored",
];

export default defineWorkflow({
  name: "leak",
  input: z.object({ mode: z.string(), hidden: z.string() }),
  startAt: "pick",
  includes: {
    include: includeWorkflow(child, {
      input: ({ input }) => ({ value: secret(input), [secret(input)]: true }),
    }),
  },
  nodes: {
    pick: decision({ choices: MODES, decide: ({ input }) => input.mode }),
    throwError: compute({ run: ({ input }) => { throw new Error("cannot use " + secret(input)); } }),
    reject: compute({ run: async ({ input }) => { await Promise.reject(new TypeError(secret(input))); } }),
    throwString: compute({ run: ({ input }) => { throw secret(input); } }),
    throwObject: compute({ run: ({ input }) => { throw { token: secret(input) }; } }),
    jsonInput: compute({ run: ({ input }) => JSON.parse(secret(input)) }),
    jsonEnv: compute({ run: () => JSON.parse(process.env.PIW_LEAK_jsonEnv) }),
    zodRefine: compute({ run: ({ input }) => z.string().refine(() => false, echo).parse(secret(input)) }),
    zodKeys: compute({ run: ({ input }) => z.strictObject({}).parse({ [secret(input)]: 1 }) }),
    shellExit: shell({ exec: { shell: 'echo "$PIW_LEAK_shellExit"; echo "$PIW_LEAK_shellExit" >&2; exit 2' } }),
    shellSpawn: shell({ exec: ({ input }) => ["/nonexistent/" + secret(input)] }),
    shellParse: shell({ exec: ["printenv", "PIW_LEAK_shellParse"], parse: ({ stdout }) => JSON.parse(stdout) }),
    effectThrow: action({
      run: ({ input, effects }) => effects.idempotent("send", { to: "x" }, () => { throw new Error(secret(input)); }),
    }),
    effectResult: action({
      run: async ({ input, effects }) => {
        const got = await effects.idempotent("fetch", { what: "token" }, () => ({ token: input.hidden }));
        return JSON.parse([...got.token].reverse().join(""));
      },
    }),
    route: compute({ run: ({ input }) => secret(input) }),
    checkpointPrompt: checkpoint({
      prompt: ({ input }) => { throw new RangeError(secret(input)); },
      answer: z.object({ ok: z.boolean() }),
    }),
    uncaught: compute({
      run: ({ input }) => {
        setTimeout(() => { throw new Error(secret(input)); }, 0);
        return new Promise(() => {});
      },
    }),
    authored: compute({ run: () => { throw new WorkflowError("the tests failed"); } }),
  },
  edges: {
    pick: decisionEdge(Object.fromEntries(MODES.map((mode) => [mode, mode]))),
    ...Object.fromEntries(MODES.filter((m) => !["include", "route", "checkpointPrompt"].includes(m)).map((m) => [m, { to: "done" }])),
    "include.done": { to: "done" },
    route: { to: ["done", "throwError"], route: (output) => output },
    checkpointPrompt: { to: "done" },
  },
});
`;

/** Its top level reads the environment, which only the worker has: preflight loads it, the worker cannot. */
const LOAD_FLOW = `import { compute, defineWorkflow } from "piw";
const config = process.env.PIW_LEAK_load === undefined ? {} : JSON.parse(process.env.PIW_LEAK_load);
export default defineWorkflow({
  name: "leakload",
  startAt: "use",
  nodes: { use: compute({ run: () => config }) },
  edges: { use: { to: "done" } },
});
`;

/** What each failure path must still say: who failed, and how, in piw's own words. */
const EXPECTED: Record<string, { code: string; message: RegExp }> = {
  throwError: { code: "node_failed", message: /^Compute node throwError threw an Error\.$/ },
  reject: { code: "node_failed", message: /^Compute node reject threw a TypeError\.$/ },
  throwString: { code: "node_failed", message: /^Compute node throwString threw a string, not an Error\.$/ },
  throwObject: { code: "node_failed", message: /^Compute node throwObject threw an object, not an Error\.$/ },
  jsonInput: { code: "node_failed", message: /^Compute node jsonInput threw a SyntaxError\.$/ },
  jsonEnv: { code: "node_failed", message: /^Compute node jsonEnv threw a SyntaxError\.$/ },
  zodRefine: {
    code: "node_failed",
    message: /^Compute node zodRefine threw a ZodError: \(root\): failed a check\.$/,
  },
  zodKeys: {
    code: "node_failed",
    message: /^Compute node zodKeys threw a ZodError: \(root\): 1 unrecognized key\(s\)\.$/,
  },
  shellExit: { code: "node_failed", message: /^Command of shellExit exited with code 2\.$/ },
  shellSpawn: {
    code: "node_failed",
    message: /^Starting the command of shellSpawn threw an Error \(ENOENT\)\.$/,
  },
  shellParse: { code: "node_failed", message: /^Shell node shellParse threw a SyntaxError\.$/ },
  effectThrow: { code: "node_failed", message: /^Effect send of effectThrow threw an Error\.$/ },
  effectResult: { code: "node_failed", message: /^Action node effectResult threw a SyntaxError\.$/ },
  include: { code: "input_invalid", message: /the input of "include" does not match its schema/ },
  route: { code: "node_failed", message: /^Compute node route could not route: .*returned a string/ },
  checkpointPrompt: {
    code: "node_failed",
    message: /^The prompt of checkpoint checkpointPrompt threw a RangeError\.$/,
  },
  uncaught: { code: "worker_failed", message: /^The worker threw an Error\.$/ },
};

let box: Sandbox;
let host: RunningHost;
let client: TestClient;
let reserveLeak: Awaited<ReturnType<typeof writeWorkflow>>["reserve"];
const hostLog: string[] = [];
const received: unknown[] = [];

beforeAll(async () => {
  box = sandbox();
  host = await start(box, {
    log: (line) => hostLog.push(line),
    workerEnv: {
      ...TSX_ENV,
      ...Object.fromEntries(MODES.map((mode) => [`PIW_LEAK_${mode}`, canaryOf(mode)])),
    },
  });
  client = await TestClient.connect(host.socketPath);
  reserveLeak = (await writeWorkflow(box, "leak", LEAK_FLOW)).reserve;
});
afterAll(async () => {
  client.close();
  await host.stop();
  box.cleanup();
});

const MODES = [...Object.keys(EXPECTED), "authored", "load"];

/** Run one mode as a Pi run (so its terminal message is queued too) and collect all a client gets. */
async function failWith(mode: string): Promise<RunView> {
  const sessionId = `session-${mode}`;
  const reserved = await client.call(
    "runs.reserve",
    reserveLeak({ mode, hidden: reversed(canaryOf(mode)) }, { kind: "pi", sessionId }),
  );
  if (reserved.kind !== "applied") throw new Error(`not reserved: ${JSON.stringify(reserved)}`);
  const { runId } = reserved.value;
  await client.call("runs.subscribe", { runId });
  await client.call("session.settled", { sessionId });
  const ended = await client.view(runId, (view) => view.status === "failed");
  received.push(
    ...client.views.filter((view) => view.runId === runId),
    await client.call("runs.get", { runId }),
    await client.call("runs.history", { runId }),
    await client.call("runs.list", {}),
    await client.call("messages.claim", { sessionId }),
  );
  return ended;
}

/**
 * Every byte of every file in the state directory: the database, its WAL and anything beside them.
 * The WAL is read before the database: a checkpoint between the two reads moves pages into the
 * database, never out of both.
 */
function stateBytes(dir = box.stateDir): Buffer {
  const entries = readdirSync(dir, { withFileTypes: true }).sort(
    (a, b) => Number(b.name.endsWith("-wal")) - Number(a.name.endsWith("-wal")),
  );
  return Buffer.concat(
    entries.map((entry) => {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) return stateBytes(path);
      return entry.isFile() ? readIfStillThere(path) : Buffer.alloc(0);
    }),
  );
}

/**
 * A file's bytes, or none when it went between the listing and the read: Node's compile cache
 * writes a temporary file and renames it, and a file that is gone holds nothing saved.
 */
function readIfStillThere(path: string): Buffer {
  try {
    return readFileSync(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return Buffer.alloc(0);
    throw error;
  }
}

function expectNoCanary(canary: string): void {
  expect(JSON.stringify(received)).not.toContain(canary);
  expect(stateBytes().includes(Buffer.from(canary))).toBe(false);
}

describe("errors from workflow code never carry its input, environment or effect results", () => {
  it.each(Object.entries(EXPECTED))("%s: saved and sent without the canary", async (mode, expected) => {
    const view = await failWith(mode);
    // The reading sees what was saved: the input, with the canary reversed, is in those bytes.
    expect(stateBytes().includes(Buffer.from(reversed(canaryOf(mode))))).toBe(true);
    expectNoCanary(canaryOf(mode));
    expect(view.error?.code).toBe(expected.code);
    expect(view.error?.message).toMatch(expected.message);
  });

  it("keeps the raw text in the worker's local debug log, which goes to the host log only", () => {
    // The runs above have ended; their workers' stderr lines reached the log.
    const debugLines = hostLog.filter((line) => line.includes("debug:"));
    expect(debugLines.some((line) => line.includes(canaryOf("throwError")))).toBe(true);
    for (const canary of canaries.values()) expectNoCanary(canary);
  });

  it("load: a workflow file whose top level throws is saved by the error's class", async () => {
    const flow = await writeWorkflow(box, "leakload", LOAD_FLOW);
    const sessionId = "session-load";
    const reserved = await client.call("runs.reserve", flow.reserve(null, { kind: "pi", sessionId }));
    if (reserved.kind !== "applied") throw new Error(`not reserved: ${JSON.stringify(reserved)}`);
    const { runId } = reserved.value;
    await client.call("runs.subscribe", { runId });
    await client.call("session.settled", { sessionId });
    const view = await client.view(runId, (v) => v.status === "failed");
    received.push(
      ...client.views.filter((v) => v.runId === runId),
      await client.call("runs.history", { runId }),
      await client.call("messages.claim", { sessionId }),
    );
    expectNoCanary(canaryOf("load"));
    expect(view.error?.code).toBe("workflow_invalid");
    expect(view.error?.message).toMatch(/leakload\.workflow\.ts failed to load: it threw a SyntaxError\.$/);
  });

  it("saves a WorkflowError's message as its author wrote it", async () => {
    const view = await failWith("authored");
    expect(view.error).toEqual({
      code: "node_failed",
      message: "Compute node authored failed: the tests failed",
    });
  });
});
