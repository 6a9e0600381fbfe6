import { execFile } from "node:child_process";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type FakeModel,
  installHerdrStandIn,
  lastMessageText,
  packPiw,
  PI_BIN,
  PI_PACKAGE,
  queuedRunId,
  REPO,
  requireBuiltPackage,
  sharedNpmCache,
  startFakeModel,
  startPiSession,
  stopHost,
  text,
  toolCall,
  userEnv,
  whenLastMessageContains,
} from "@piw/test-kit";

/**
 * The published package, not the checkout: the built package is packed with npm, installed with npm into
 * a temp prefix outside the repository (no workspace node_modules above it; npm fetches better-sqlite3,
 * zod, jiti and the pi-tui peer from the registry), and everything below runs from that install.
 */

const run = promisify(execFile);

const manifest = JSON.parse(readFileSync(join(PI_PACKAGE, "package.json"), "utf8")) as {
  name: string;
  version: string;
};
let root: string;
let tarball: string;
let prefix: string;
/** The unpacked package as npm installed it. */
let installed: string;
let piwBin: string;
const homes: string[] = [];

beforeAll(async () => {
  requireBuiltPackage();
  root = mkdtempSync(join(tmpdir(), "piw-e2e-packed-"));
  const home = join(root, "npm-home");
  mkdirSync(home);
  const env = { ...userEnv(home), npm_config_cache: sharedNpmCache(home) };
  tarball = await packPiw(root, env);
  prefix = join(root, "prefix");
  mkdirSync(prefix);
  await run("npm", ["install", "--prefix", prefix, "--no-audit", "--no-fund", "--no-save", tarball], {
    cwd: root,
    env,
    timeout: 240_000,
  });
  installed = join(prefix, "node_modules", manifest.name);
  piwBin = join(prefix, "node_modules", ".bin", "piw");
}, 300_000);

afterAll(async () => {
  for (const home of homes) await stopHost(join(home, "piw"));
  if (root !== undefined) rmSync(root, { recursive: true, force: true });
});

function freshHome(): string {
  const home = join(root, `home-${homes.length}`);
  mkdirSync(home);
  homes.push(home);
  return home;
}

const SUM = `import { compute, defineWorkflow, type NodeContext } from "piw";
import { z } from "zod";

export default defineWorkflow({
  name: "sum",
  input: z.object({ task: z.string() }),
  startAt: "add",
  nodes: {
    add: compute({
      run: ({ input }: NodeContext<{ task: string }>) =>
        input.task.split(" ").reduce((total, word) => total + Number(word), 0),
    }),
  },
  edges: { add: { to: "done" } },
});
`;

const ONE_STEP = `import { agent, defineWorkflow, type NodeContext } from "piw";
import { z } from "zod";

export default defineWorkflow({
  name: "one-step",
  input: z.object({ task: z.string() }),
  startAt: "say",
  nodes: {
    say: agent({
      prompt: ({ input }: NodeContext<{ task: string }>) => \`ONE-STEP for \${input.task}: submit { said: string }.\`,
      output: z.object({ said: z.string() }),
    }),
  },
  edges: { say: { to: "done" } },
});
`;

const ISO_CHECK = `import { agent, defineWorkflow, type NodeContext } from "piw";
import { z } from "zod";

export default defineWorkflow({
  name: "iso-check",
  input: z.object({ task: z.string() }),
  startAt: "check",
  nodes: {
    check: agent({
      session: "isolated",
      prompt: ({ input }: NodeContext<{ task: string }>) => \`ISO-CHECK of \${input.task}: submit { ok: boolean }.\`,
      output: z.object({ ok: z.boolean() }),
    }),
  },
  edges: { check: { to: "done" } },
});
`;

function writeProject(name: string, source: string): string {
  // Inside the prefix: the project's `piw` resolves to the installed package, as after `npm i -D piw`.
  const project = join(prefix, `project-${homes.length}`);
  mkdirSync(join(project, ".pi", "workflows"), { recursive: true });
  writeFileSync(join(project, ".pi", "workflows", `${name}.workflow.ts`), source);
  return project;
}

/**
 * The layout Pi's own npm install of a package gives: no peers, so no Pi package beside piw. The
 * extension gets Pi's copies from Pi; host, worker and preflight child must need none of them. Made
 * once, for the tests that install it into Pi.
 */
let piInstall: Promise<string> | undefined;
function installForPi(home: string): Promise<string> {
  piInstall ??= (async () => {
    const piPrefix = join(root, "pi-prefix");
    mkdirSync(piPrefix);
    const npmEnv = { ...userEnv(home), npm_config_cache: sharedNpmCache(home) };
    await run(
      "npm",
      [
        "install",
        "--prefix",
        piPrefix,
        "--no-audit",
        "--no-fund",
        "--no-save",
        "--legacy-peer-deps",
        tarball,
      ],
      { cwd: root, env: npmEnv, timeout: 240_000 },
    );
    expect(existsSync(join(piPrefix, "node_modules", "@earendil-works"))).toBe(false);
    return join(piPrefix, "node_modules", manifest.name);
  })();
  return piInstall;
}

/**
 * A real Pi session in `project` with the installed package: `prompt` makes the scripted model start a
 * run, which the installed CLI then follows (from the host the installed extension started) until it
 * is done; `check` looks at it before Pi closes.
 */
async function runFromPi(
  setup: { home: string; piPackage: string; project: string; model: FakeModel; prompt: string },
  check: (run: { runId: string; env: NodeJS.ProcessEnv }) => Promise<void>,
): Promise<void> {
  const { home, piPackage, project, model, prompt } = setup;
  const pi = await startPiSession({
    model,
    cwd: project,
    // The session has an agent dir of its own: the same package entry, as an absolute path. Its
    // environment is built from scratch (no PIW_PI_SDK).
    settings: { packages: [piPackage] },
    env: { PIW_HOME: join(home, "piw") },
  });
  try {
    await pi.promptAndSettle(prompt);
    const started = model.requests.find((r) => lastMessageText(r).includes("queued (run"));
    expect(started, pi.stderr.slice(-2000)).toBeDefined();
    const runId = queuedRunId(lastMessageText(started as NonNullable<typeof started>));
    const env = userEnv(home);
    let view: { status?: string; outcome?: string } = {};
    for (let i = 0; i < 600 && view.status !== "done"; i += 1) {
      const { stdout } = await run(piwBin, ["status", runId, "--json"], { env, cwd: project });
      view = JSON.parse(stdout) as typeof view;
      if (view.status !== "done") await new Promise((r) => setTimeout(r, 100));
    }
    expect(view, pi.stderr.slice(-2000)).toMatchObject({ status: "done", outcome: "completed" });
    await check({ runId, env });
  } finally {
    await pi.close();
  }
}

describe("the packed piw package, installed with npm", () => {
  it("has the files it promises and none of the workspace", () => {
    const installedManifest = JSON.parse(readFileSync(join(installed, "package.json"), "utf8")) as {
      dependencies?: Record<string, string>;
    };
    for (const file of [
      "piw.js",
      "piw-host.js",
      "piw-worker.js",
      "piw-preflight.js",
      "extension.js",
      "herdr-pane.js",
      "index.d.ts",
    ]) {
      expect(existsSync(join(installed, "dist", file)), file).toBe(true);
    }
    // One skill per folder, so Pi's package filters can turn each off alone.
    for (const skill of ["piw", "sanity-check", "autoplan", "autodoc", "autoimplement", "monitor"]) {
      expect(existsSync(join(installed, "skills", skill, "SKILL.md")), skill).toBe(true);
    }
    expect(existsSync(join(installed, "LICENSE"))).toBe(true);
    expect(Object.keys(installedManifest.dependencies ?? {}).sort()).toEqual([
      "better-sqlite3",
      "jiti",
      "zod",
    ]);
    // No bundle imports a workspace package: they are inlined (the workspace fallbacks of the entry
    // lookups only name them, behind the bundled entries).
    for (const file of readdirSync(join(installed, "dist")).filter((name) => name.endsWith(".js"))) {
      expect(readFileSync(join(installed, "dist", file), "utf8"), file).not.toMatch(
        /(from\s*|import\()["']@piw\//,
      );
    }
    expect(existsSync(join(prefix, "node_modules", "@piw"))).toBe(false);
  });

  it("carries the Herdr plugin: its manifest at the package root with the package's version, and piw herdr sync links it there", async () => {
    const text = readFileSync(join(installed, "herdr-plugin.toml"), "utf8");
    expect(text).toMatch(/^id = "piw"$/m);
    expect(text).toContain(`\nversion = ${JSON.stringify(manifest.version)}\n`);
    expect(text).toMatch(/^min_herdr_version = "\d+\.\d+\.\d+"$/m);
    expect(text).toMatch(/^platforms = \["linux", "macos"\]$/m);
    expect(text).toContain('[[panes]]\nid = "viewer"');
    expect(text).toContain('command = ["node", "dist/herdr-pane.js"]');
    const herdr = installHerdrStandIn(join(root, "herdr-packed"));
    const env = { ...userEnv(freshHome()), ...herdr.env };
    const { stdout } = await run(piwBin, ["herdr", "sync", "--json"], { env, cwd: root });
    const synced = JSON.parse(stdout) as { action: string; root: string; version: string };
    expect(synced).toMatchObject({
      action: "linked",
      root: realpathSync(installed),
      version: manifest.version,
    });
    expect(herdr.state().plugins).toEqual([
      expect.objectContaining({
        plugin_id: "piw",
        plugin_root: realpathSync(installed),
        version: manifest.version,
        enabled: true,
      }),
    ]);
  });

  it("npm publish --dry-run takes the manifest as it is (npm corrects nothing, such as dropping a bin)", async () => {
    const home = freshHome();
    const env = { ...userEnv(home), npm_config_cache: sharedNpmCache(home) };
    const { stdout, stderr } = await run("npm", ["publish", "--dry-run"], {
      cwd: PI_PACKAGE,
      env,
      timeout: 120_000,
    });
    expect(stderr).not.toMatch(/corrected|invalid and removed/i);
    expect(`${stdout}${stderr}`).toContain(`${manifest.name}@${manifest.version}`);
  }, 150_000);

  it("piw workflows --json lists the built-ins of the install, with their input and purpose", async () => {
    const env = userEnv(freshHome());
    const { stdout } = await run(piwBin, ["workflows", "--json"], { env, cwd: root, timeout: 60_000 });
    const listed = JSON.parse(stdout) as { workflows: Array<Record<string, unknown>> };
    expect(listed.workflows.find((workflow) => workflow.name === "sanity-check")).toMatchObject({
      source: { kind: "builtin", path: null },
      input: { keys: ["focus", "base", "mode", "failOn"], required: [] },
      textInput: "focus",
      summary: expect.stringContaining("verdict"),
      problem: null,
    });
    expect(listed.workflows.find((workflow) => workflow.name === "autoplan")).toMatchObject({
      source: { kind: "builtin", path: null },
      input: { keys: ["problem", "scope", "constraints", "planFile", "approval"], required: ["problem"] },
      textInput: "problem",
      problem: null,
    });
    expect(listed.workflows.find((workflow) => workflow.name === "autodoc")).toMatchObject({
      source: { kind: "builtin", path: null },
      input: { keys: ["task", "plan", "documents", "workspace", "base", "from"], required: ["task"] },
      textInput: "task",
      problem: null,
    });
  }, 90_000);

  it("piw --version and -V print the package version", async () => {
    const env = userEnv(freshHome());
    for (const flag of ["--version", "-V"]) {
      const { stdout } = await run(piwBin, [flag], { env, cwd: root });
      expect(stdout.trim()).toBe(manifest.version);
    }
  });

  it("every entry refuses an old Node in one line, before it loads anything that needs Node 22.19", async () => {
    const env = userEnv(freshHome());
    // The entries see the Node version this preload reports; the real Node runs them.
    const oldNode = "data:text/javascript,Object.defineProperty(process,'version',{value:'v20.11.1'})";
    for (const entry of ["piw.js", "piw-host.js", "piw-worker.js", "piw-preflight.js", "herdr-pane.js"]) {
      const result = await run(process.execPath, ["--import", oldNode, join(installed, "dist", entry)], {
        env,
        cwd: root,
      }).then(
        () => ({ code: 0, stderr: "" }),
        (error: { code?: number; stderr?: string }) => ({ code: error.code, stderr: error.stderr ?? "" }),
      );
      expect(result.code, entry).toBe(78);
      const lines = result.stderr.trim().split("\n");
      expect(lines, entry).toHaveLength(1);
      expect(lines[0], entry).toMatch(/needs Node 22\.19 or newer; this is Node v20\.11\.1/);
    }
    // The extension must not end Pi: it loads, says so once when Pi calls it, and adds nothing. Its
    // real code (which imports typebox, not installed here) is never loaded.
    const extension = pathToFileURL(join(installed, "dist", "extension.js")).href;
    const load = `const { default: extension } = await import(${JSON.stringify(extension)}); extension({}); console.log("loaded");`;
    const loaded = await run(process.execPath, ["--import", oldNode, "--input-type=module", "-e", load], {
      env,
      cwd: root,
    });
    expect(loaded.stdout.trim()).toBe("loaded");
    expect(loaded.stderr.trim()).toMatch(/^piw: needs Node 22\.19 or newer; this is Node v20\.11\.1 [^\n]*$/);
  });

  it("piw run runs a workflow file that imports piw, on the host and worker of the install, and its types check", async () => {
    const home = freshHome();
    const env = userEnv(home);
    const project = writeProject("sum", SUM);
    const { stdout } = await run(piwBin, ["run", "sum", "2", "3"], {
      env,
      cwd: project,
      timeout: 60_000,
    });
    expect(stdout).toMatch(/sum completed/);
    const status = await run(piwBin, ["host", "status"], { env, cwd: project });
    // The host that ran it is the installed one: it reports the package's version.
    expect(status.stdout).toContain(`version ${manifest.version}`);

    // The editor's view: `piw` resolves to the installed package and its declarations.
    writeFileSync(
      join(project, "tsconfig.json"),
      JSON.stringify({
        compilerOptions: {
          target: "ES2023",
          module: "NodeNext",
          moduleResolution: "NodeNext",
          strict: true,
          noEmit: true,
          allowImportingTsExtensions: true,
          skipLibCheck: true,
          types: [],
        },
        include: [".pi/workflows/*.workflow.ts"],
      }),
    );
    const tsc = join(REPO, "node_modules", "typescript", "bin", "tsc");
    await run(process.execPath, [tsc, "-p", project], { env, cwd: project, timeout: 120_000 });
    writeFileSync(
      join(project, ".pi", "workflows", "wrong.workflow.ts"),
      `import { compute } from "piw";\nexport const node = compute({ run: 42 });\n`,
    );
    const wrong = await run(process.execPath, [tsc, "-p", project], { env, cwd: project }).then(
      () => "",
      (error: { stdout?: string }) => error.stdout ?? "",
    );
    expect(wrong).toMatch(/wrong\.workflow\.ts.*error TS/);
  }, 180_000);

  it("without PIW_HOME, keeps its state and finds user workflows in Pi's agent folder ($PI_CODING_AGENT_DIR, ~ expanded)", async () => {
    const home = freshHome();
    const agentDir = join(home, "pi-agent");
    const stateDir = join(agentDir, "workflows");
    mkdirSync(stateDir, { recursive: true });
    // A user workflow, with no node_modules near it: the loader gives it the install's piw and zod.
    writeFileSync(join(stateDir, "sum.workflow.ts"), SUM);
    const { PIW_HOME: _unset, ...env } = userEnv(home, { PI_CODING_AGENT_DIR: "~/pi-agent" });
    try {
      const { stdout } = await run(piwBin, ["run", "sum", "4", "5"], { env, cwd: root, timeout: 60_000 });
      expect(stdout).toMatch(/sum completed/);
      expect(existsSync(join(stateDir, "state.db"))).toBe(true);
      expect(existsSync(join(stateDir, "host.lock"))).toBe(true);
      expect(existsSync(join(home, ".pi"))).toBe(false);
      expect(existsSync(join(home, "piw"))).toBe(false);
    } finally {
      await stopHost(stateDir);
    }
  }, 120_000);

  it("pi install <unpacked package> in a fresh Pi home, and a real Pi session runs a workflow with one agent step", async () => {
    const home = freshHome();
    const piPackage = await installForPi(home);
    const agentDir = join(home, "agent");
    mkdirSync(agentDir, { recursive: true });
    const piEnv = userEnv(home, {
      PI_CODING_AGENT_DIR: agentDir,
      PI_OFFLINE: "1",
      PI_TELEMETRY: "0",
      PI_SKIP_VERSION_CHECK: "1",
    });
    await run(PI_BIN, ["install", piPackage], { env: piEnv, timeout: 60_000 });
    const settings = JSON.parse(readFileSync(join(agentDir, "settings.json"), "utf8")) as {
      packages?: unknown[];
    };
    expect(JSON.stringify(settings.packages)).toContain("pi-prefix/node_modules/piw");

    const project = writeProject("one-step", ONE_STEP);
    const model = await startFakeModel();
    try {
      model.reply(
        whenLastMessageContains(
          "run the one step",
          toolCall("workflow", { action: "start", workflow: "one-step", task: "tea" }),
        ),
      );
      model.reply(whenLastMessageContains("queued (run", text("Queued.")));
      model.reply(
        whenLastMessageContains(
          "ONE-STEP for tea",
          toolCall("workflow", { action: "submit", output: { said: "hi" } }),
        ),
      );
      model.reply(whenLastMessageContains("Accepted: workflow step say", text("Submitted.")));
      model.reply(whenLastMessageContains("Final output", text("PRESENTED.")));
      await runFromPi({ home, piPackage, project, model, prompt: "run the one step" }, async ({ env }) => {
        expect(model.requests.some((r) => lastMessageText(r).includes("ONE-STEP for tea"))).toBe(true);
        const status = await run(piwBin, ["host", "status"], { env, cwd: project });
        expect(status.stdout).toContain(`version ${manifest.version}`);
      });
    } finally {
      await model.close();
    }
  }, 240_000);

  it("without Pi, an isolated agent step fails with a typed, bounded error that says what to do", async () => {
    // npm left Pi's SDK out (an optional peer), and no Pi reported one: the step cannot open a session.
    expect(existsSync(join(prefix, "node_modules", "@earendil-works", "pi-coding-agent"))).toBe(false);
    const home = freshHome();
    const env = userEnv(home);
    const project = writeProject("iso-check", ISO_CHECK);
    const printed = await run(piwBin, ["run", "iso-check", "tea"], {
      env,
      cwd: project,
      timeout: 60_000,
    }).then(
      ({ stdout }) => ({ code: 0, stdout }),
      (error: { code?: number; stdout?: string }) => ({ code: error.code, stdout: error.stdout ?? "" }),
    );
    expect(printed.code).not.toBe(0);
    expect(printed.stdout).toContain("pi_sdk_missing");
    expect(printed.stdout).toContain("start the run from a Pi that has piw installed");
    const { stdout } = await run(piwBin, ["list", "--json"], { env, cwd: project });
    const {
      runs: [listed],
    } = JSON.parse(stdout) as { runs: Array<{ runId: string }> };
    const view = JSON.parse(
      (await run(piwBin, ["status", String(listed?.runId), "--json"], { env, cwd: project })).stdout,
    ) as { status: string; outcome: string; error?: { code: string; message: string } };
    expect(view).toMatchObject({ status: "failed", outcome: "failed", error: { code: "pi_sdk_missing" } });
    expect(Buffer.byteLength(view.error?.message ?? "")).toBeLessThanOrEqual(512);
    expect(view.error?.message).toContain("PIW_PI_SDK");
  }, 120_000);

  it("a Pi-started isolated agent step opens its session with the SDK of the Pi that runs piw (none beside piw, no PIW_PI_SDK)", async () => {
    const home = freshHome();
    const piPackage = await installForPi(home);
    // From piw's own install, Pi's SDK does not resolve: only the running Pi can say where it is.
    const probe = await run(
      process.execPath,
      ["--input-type=module", "-e", 'await import("@earendil-works/pi-coding-agent")'],
      { cwd: piPackage, env: userEnv(home) },
    ).then(
      () => "resolved",
      (error: { stderr?: string }) => error.stderr ?? "",
    );
    expect(probe).toContain("ERR_MODULE_NOT_FOUND");

    const project = writeProject("iso-check", ISO_CHECK);
    const model = await startFakeModel();
    try {
      model.reply(
        whenLastMessageContains(
          "run the iso check",
          toolCall("workflow", { action: "start", workflow: "iso-check", task: "tea" }),
        ),
      );
      model.reply(whenLastMessageContains("queued (run", text("Queued.")));
      model.reply(
        whenLastMessageContains(
          "ISO-CHECK of tea",
          toolCall("workflow", { action: "submit", output: { ok: true } }),
        ),
      );
      model.reply(whenLastMessageContains("Final output", text("CHECKED.")));
      await runFromPi(
        { home, piPackage, project, model, prompt: "run the iso check" },
        async ({ runId, env }) => {
          // The step ran in a fresh SDK session in the worker: its record is saved with the step, and
          // its request held nothing of the conversation.
          const { stdout } = await run(piwBin, ["status", runId, "--step", "check", "--json"], {
            env,
            cwd: project,
          });
          const sessions = JSON.parse(stdout) as Array<{
            report: { model: string | null; tokensIn: number } | null;
          }>;
          expect(sessions).toHaveLength(1);
          expect(sessions[0]?.report?.model).toBe(`fake/${model.modelId}`);
          expect(sessions[0]?.report?.tokensIn).toBeGreaterThan(0);
          const check = model.requests.find((r) => lastMessageText(r).includes("ISO-CHECK of tea"));
          expect(JSON.stringify(check?.messages)).not.toContain("run the iso check");
          expect(check?.tools.map((t) => t.function.name).sort()).toEqual([
            "find",
            "grep",
            "ls",
            "read",
            "workflow",
          ]);
        },
      );
    } finally {
      await model.close();
    }
  }, 240_000);
});
