import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { removeTree } from "@piw/test-kit";
import { LaunchRefused, preflightLaunch } from "../src/index.js";

// The preflight child's model check, in a real child: a stand-in entry serves the real preflight
// with a scripted check (what it answers, and the steps it was asked about, go to a file).
const REPO = resolve(import.meta.dirname, "../../..");
const TSX = join(REPO, "node_modules/tsx/dist/loader.mjs");
const ENV = { ...process.env, TSX_TSCONFIG_PATH: join(REPO, "tsconfig.json") };
// A check that would outlast the time limit is skipped by design; a loaded machine must not make
// these tests see a skip where they ask for an answer.
const LIMIT_MS = 45_000;

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "piw-preflight-model-"));
  const workflow = (name: string, session: string) =>
    writeFileSync(
      join(dir, `${name}.workflow.ts`),
      `import { agent, compute, defineWorkflow } from "piw";
import { z } from "zod";
export default defineWorkflow({
  name: "${name}",
  startAt: "prep",
  nodes: {
    prep: compute({ run: () => 1 }),
    ask: agent({ ${session} prompt: "p", output: z.string() }),
  },
  edges: { prep: { to: "ask" }, ask: { to: "done" } },
});
`,
    );
  workflow("plain", "");
  workflow("pinned", 'session: "isolated", model: "acme/m1",');
});
afterAll(() => removeTree(dir));

/** A preflight entry whose check answers `answer` (JS source of a Promise), noting what it was asked. */
function entry(name: string, answer: string): string[] {
  const file = join(dir, `${name}.entry.ts`);
  const asked = join(dir, `${name}.asked`);
  writeFileSync(
    file,
    `import { writeFileSync } from "node:fs";
import { servePreflight } from ${JSON.stringify(join(REPO, "packages/engine/src/index.ts"))};
servePreflight({
  checkModels: (request) => {
    writeFileSync(${JSON.stringify(asked)}, JSON.stringify(request.steps));
    return ${answer};
  },
});
`,
  );
  return [process.execPath, "--import", TSX, file];
}

const asked = (name: string): unknown => {
  try {
    return JSON.parse(readFileSync(join(dir, `${name}.asked`), "utf8"));
  } catch {
    return null;
  }
};

const refusalOf = (promise: Promise<unknown>) =>
  promise.then(
    () => undefined,
    (error: unknown) => error as LaunchRefused,
  );

describe("the preflight's model check", () => {
  it("refuses with model_unavailable as a usage error when the check finds no model, before anything is saved", async () => {
    const command = entry(
      "refuse",
      `Promise.resolve({ kind: "unavailable", message: "no usable model:", problems: ["ask: nope"] })`,
    );
    const refused = await refusalOf(
      preflightLaunch(
        { ref: join(dir, "plain.workflow.ts"), cwd: dir, piSession: false },
        { command, env: ENV, timeoutMs: LIMIT_MS },
      ),
    );
    expect(refused).toBeInstanceOf(LaunchRefused);
    expect(refused).toMatchObject({ code: "model_unavailable", message: "no usable model:", usage: true });
    expect(refused?.problems).toEqual(["ask: nope"]);
    expect(asked("refuse")).toEqual([{ path: "ask" }]);
  }, 60_000);

  it("asks only about isolated steps: a Pi-started run's default steps use the Pi session's model", async () => {
    const command = entry(
      "pi",
      `Promise.resolve({ kind: "unavailable", message: "no usable model:", problems: [] })`,
    );
    const prepared = await preflightLaunch(
      { ref: join(dir, "plain.workflow.ts"), cwd: dir, piSession: true },
      { command, env: ENV, timeoutMs: LIMIT_MS },
    );
    expect(prepared.workflowName).toBe("plain");
    expect(asked("pi")).toBeNull();
    const refused = await refusalOf(
      preflightLaunch(
        { ref: join(dir, "pinned.workflow.ts"), cwd: dir, piSession: true },
        { command, env: ENV, timeoutMs: LIMIT_MS },
      ),
    );
    expect(refused).toMatchObject({ code: "model_unavailable" });
    expect(asked("pi")).toEqual([{ path: "ask", model: "acme/m1" }]);
  }, 60_000);

  it("skips a check that would outlast the time limit instead of calling it a load timeout", async () => {
    const command = entry("slow", "new Promise(() => {})");
    const prepared = await preflightLaunch(
      { ref: join(dir, "plain.workflow.ts"), cwd: dir, piSession: false },
      { command, env: ENV, timeoutMs: 10_000 },
    );
    expect(prepared.workflowName).toBe("plain");
  }, 60_000);
});
