import {
  chmodSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { removeTree } from "@piw/test-kit";
import { afterAll, beforeEach, describe, expect, it } from "vitest";
import { LaunchRefused, type PreflightOptions, preflightLaunch } from "../src/index.js";

// The launch cache from the outside: the real preflight entry in a child process, a real state
// directory, and workflow files that count their own evaluations in a file beside them.
const REPO = resolve(import.meta.dirname, "../../..");
const TSX = join(REPO, "node_modules/tsx/dist/loader.mjs");
const ENTRY = [process.execPath, "--import", TSX, join(REPO, "apps/worker/src/preflight.ts")];
const ENV = { ...process.env, TSX_TSCONFIG_PATH: join(REPO, "tsconfig.json") };

const root = mkdtempSync(join(tmpdir(), "piw-preflight-cache-"));
afterAll(() => removeTree(root));

let dir: string;
let stateDir: string;
let options: PreflightOptions;
let round = 0;
beforeEach(() => {
  round += 1;
  dir = join(root, `case-${round}`);
  stateDir = join(dir, "state");
  // Private, as piw's own state directory is.
  mkdirSync(stateDir, { recursive: true, mode: 0o700 });
  chmodSync(dir, 0o700);
  options = { command: ENTRY, env: ENV, stateDir };
});

/** A workflow whose title comes from `./title.ts`, which counts each evaluation in `evaluations`. */
function writeWorkflow(title: string): string {
  writeTitle(title);
  const file = join(dir, "counted.workflow.ts");
  writeFileSync(
    file,
    `import { compute, defineWorkflow } from "piw";
import { title } from "./title.ts";
export default defineWorkflow({ name: "counted", title, startAt: "a", nodes: { a: compute({ run: () => 1 }) }, edges: { a: { to: "done" } } });
`,
  );
  return file;
}

function writeTitle(title: string, extra = ""): void {
  writeFileSync(
    join(dir, "title.ts"),
    `import { appendFileSync } from "node:fs";
appendFileSync(${JSON.stringify(join(dir, "evaluations"))}, "x");
${extra}
export const title = ${JSON.stringify(title)};
`,
  );
}

const evaluations = () => {
  try {
    return readFileSync(join(dir, "evaluations"), "utf8").length;
  } catch {
    return 0;
  }
};

const launch = (file: string) => preflightLaunch({ ref: file, cwd: dir, piSession: false }, options);
const cacheDir = () => join(stateDir, "preflight-cache");
const entries = () => readdirSync(cacheDir()).filter((name) => name.endsWith(".json"));

describe("the launch cache", () => {
  it("reuses a prepared launch while the file and its imports are unchanged, and evaluates an edited import afresh", async () => {
    const file = writeWorkflow("first");
    expect((await launch(file)).title).toBe("first");
    expect((await launch(file)).title).toBe("first");
    expect(evaluations()).toBe(1);

    writeTitle("second");
    expect((await launch(file)).title).toBe("second");
    expect(evaluations()).toBe(2);
    expect((await launch(file)).title).toBe("second");
    expect(evaluations()).toBe(2);
  }, 60_000);

  it("gives a cached file that now exits at import its typed refusal, each time", async () => {
    const file = writeWorkflow("fine");
    await launch(file);
    await launch(file);
    expect(evaluations()).toBe(1);

    writeTitle("fine", "process.exit(3);");
    for (let attempt = 0; attempt < 2; attempt += 1) {
      const refused = await launch(file).then(
        () => undefined,
        (error: unknown) => error,
      );
      expect(refused).toBeInstanceOf(LaunchRefused);
      expect((refused as LaunchRefused).code).toBe("workflow_exited_at_load");
    }
    expect(evaluations()).toBe(3);
  }, 60_000);

  it("starts one preflight child for the same request asked many times at once (schedules due together)", async () => {
    const file = writeWorkflow("together");
    const titles = await Promise.all([launch(file), launch(file), launch(file), launch(file)]);
    expect(titles.map((prepared) => prepared.title)).toEqual([
      "together",
      "together",
      "together",
      "together",
    ]);
    expect(evaluations()).toBe(1);
  }, 60_000);

  it("gives a cached file that now hangs at import its typed refusal", async () => {
    const file = writeWorkflow("fine");
    await launch(file);
    writeTitle("fine", "await new Promise(() => setInterval(() => {}, 1000));");
    options = { ...options, timeoutMs: 3_000 };
    const refused = await launch(file).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(refused).toBeInstanceOf(LaunchRefused);
    expect((refused as LaunchRefused).code).toBe("workflow_load_timeout");
    expect(evaluations()).toBe(2);
  }, 60_000);

  it("keeps its entries private (0700 folder, 0600 files) and trusts no link or open folder", async () => {
    const file = writeWorkflow("mine");
    await launch(file);
    expect(statSync(cacheDir()).mode & 0o777).toBe(0o700);
    const [entry] = entries();
    if (entry === undefined) throw new Error("no cache entry was written");
    const path = join(cacheDir(), entry);
    expect(statSync(path).mode & 0o777).toBe(0o600);

    // A link in place of the entry, to a reply someone else wrote: not followed, so evaluated afresh.
    const planted = join(dir, "planted.json");
    const saved = JSON.parse(readFileSync(path, "utf8")) as { reply: { launch: { title: string } } };
    saved.reply.launch.title = "planted";
    writeFileSync(planted, JSON.stringify({ sources: [], reply: saved.reply }), { mode: 0o600 });
    rmSync(path);
    symlinkSync(planted, path);
    expect((await launch(file)).title).toBe("mine");
    expect(evaluations()).toBe(2);

    // A cache folder others may write is not read either.
    rmSync(path);
    await launch(file);
    expect(evaluations()).toBe(3);
    chmodSync(cacheDir(), 0o777);
    await launch(file);
    expect(evaluations()).toBe(4);

    // Nor a private cache folder in a state directory others may write.
    chmodSync(cacheDir(), 0o700);
    chmodSync(stateDir, 0o777);
    await launch(file);
    expect(evaluations()).toBe(5);
  }, 60_000);
});
