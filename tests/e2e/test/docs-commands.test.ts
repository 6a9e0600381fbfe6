import { execFile } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type DocCommand, extractCommands, runDocCommands, unexpectedEndings } from "../src/doc-commands.ts";
import { packPiw, requireBuiltPackage, sharedNpmCache, stopHost, userEnv } from "../src/packed-install.ts";
import { PI_BIN } from "../src/pi-session.ts";
import { REPO } from "../src/piw-fixture.ts";

/**
 * README.md and docs/quickstart.md, checked against the product: every shell command they show runs,
 * in order, in an empty home with the packed package installed the way the README installs it, and
 * must end as its note says. A command is left out only by a visible `[needs: …]` note, and the counts
 * below say how many run, so a doc that stops being checked fails here.
 */

const run = promisify(execFile);

/** How many commands each doc runs and leaves out; a change to a doc's commands changes these. */
const EXPECTED = {
  "README.md": { ran: 9, needs: 7 },
  "docs/quickstart.md": { ran: 16, needs: 0 },
  // The node pages run their examples from a checkout, with the installed piw.
  "docs/nodes/compute.md": { ran: 1, needs: 0 },
  "docs/nodes/shell.md": { ran: 1, needs: 0 },
  "docs/nodes/action.md": { ran: 1, needs: 0 },
  "docs/nodes/notify.md": { ran: 1, needs: 0 },
  "docs/nodes/decision.md": { ran: 1, needs: 0 },
  "docs/nodes/include.md": { ran: 1, needs: 0 },
  "docs/nodes/wait.md": { ran: 1, needs: 0 },
  "docs/nodes/parallel.md": { ran: 1, needs: 0 },
  "docs/nodes/workspace.md": { ran: 1, needs: 0 },
  "docs/nodes/approval.md": { ran: 1, needs: 0 },
} as const;
type Doc = keyof typeof EXPECTED;

let root: string;
const stateDirs: string[] = [];

beforeAll(() => {
  requireBuiltPackage();
  root = mkdtempSync(join(tmpdir(), "piw-e2e-docs-"));
});

afterAll(async () => {
  for (const dir of stateDirs) await stopHost(dir);
  if (root !== undefined) rmSync(root, { recursive: true, force: true });
}, 120_000);

function readDoc(doc: Doc): DocCommand[] {
  return extractCommands(readFileSync(join(REPO, doc), "utf8"), doc);
}

/** A shell of a user with an empty home: this Node and Pi first on PATH, and no other piw on it. */
function docEnv(home: string): NodeJS.ProcessEnv {
  const bin = join(home, ".test-bin");
  mkdirSync(bin, { recursive: true });
  for (const [name, target] of [
    ["node", process.execPath],
    ["pi", PI_BIN],
  ] as const) {
    writeFileSync(join(bin, name), `#!/bin/sh\nexec ${JSON.stringify(target)} "$@"\n`);
    chmodSync(join(bin, name), 0o755);
  }
  const npmPrefix = join(home, ".npm-global");
  const inherited = (process.env.PATH ?? "").split(delimiter).filter((dir) => !existsSync(join(dir, "piw")));
  const { PIW_HOME: _default, ...env } = userEnv(home, {
    PATH: [bin, join(npmPrefix, "bin"), ...inherited].join(delimiter),
    PI_CODING_AGENT_DIR: join(home, ".pi", "agent"),
    npm_config_prefix: npmPrefix,
    npm_config_cache: sharedNpmCache(home),
    npm_config_audit: "false",
    npm_config_fund: "false",
    SHELL: "/bin/bash",
    NO_COLOR: "1",
    NX_DAEMON: "false",
    PI_OFFLINE: "1",
    PI_TELEMETRY: "0",
    PI_SKIP_VERSION_CHECK: "1",
    // What the commands' workflows write to the temp folder stays in this home.
    TMPDIR: join(home, "tmp"),
  });
  mkdirSync(join(home, "tmp"), { recursive: true });
  stateDirs.push(join(home, ".pi", "agent", "workflows"));
  return env;
}

function freshHome(name: string): string {
  const home = join(root, name);
  mkdirSync(home);
  return home;
}

async function checkDoc(doc: Doc, startDir: string, env: NodeJS.ProcessEnv): Promise<void> {
  const commands = readDoc(doc);
  const workDir = join(root, `${doc.replaceAll("/", "-")}-work`);
  const result = await runDocCommands(commands, {
    doc,
    workDir,
    startDir,
    checkoutDir: REPO,
    env,
    timeoutMs: 840_000,
  });
  expect(unexpectedEndings(result), result.output.slice(-4000)).toEqual([]);
  const ran = result.results.filter((r) => r.command.needs === undefined);
  expect(ran.every((r) => r.status === r.command.exit)).toBe(true);
  expect({ ran: ran.length, needs: commands.length - ran.length }).toEqual(EXPECTED[doc]);
}

describe("reading the commands of a doc", () => {
  const sample = [
    "Some prose with `piw list` in it.",
    "```bash",
    "# a comment line",
    "piw list                  # the runs",
    "cat > a.txt <<'TS'",
    "# not a comment: the file's body",
    "TS",
    "piw run x \\",
    "  --detach                # [exit 3]",
    "piw answer r '{}'         # [terminal]",
    "pnpm verify               # every test [needs: a checkout]",
    "(cd apps && ls)           # [checkout]",
    "```",
    "```text",
    "piw not-a-command",
    "```",
  ].join("\n");

  it("takes each command of bash blocks with its notes, heredocs and continued lines whole", () => {
    const commands = extractCommands(sample, "sample.md");
    expect(commands.map((c) => [c.line, c.exit, c.terminal, c.checkout, c.needs])).toEqual([
      [4, 0, false, false, undefined],
      [5, 0, false, false, undefined],
      [8, 3, false, false, undefined],
      [10, 0, true, false, undefined],
      [11, 0, false, false, "a checkout"],
      [12, 0, false, true, undefined],
    ]);
    expect(commands[1]?.text).toBe("cat > a.txt <<'TS'\n# not a comment: the file's body\nTS");
    expect(commands[2]?.text).toBe("piw run x \\\n  --detach                # [exit 3]");
  });

  it("refuses a note it does not know, so a misspelt note cannot turn into an unchecked command", () => {
    expect(() => extractCommands("```bash\nls   # [exit three]\n```", "bad.md")).toThrow(/unknown note/);
    expect(() => extractCommands("```bash\ncat <<EOF\nnever closed\n```", "bad.md")).toThrow(/never closed/);
  });

  it("runs the commands in one shell and reports each that ends otherwise than its note says", async () => {
    const home = freshHome("runner-home");
    const doc = [
      "```bash",
      "cd sub 2>/dev/null || mkdir sub && cd sub",
      "NAME=piw",
      'test "$(basename "$PWD")" = sub       # cd carries over',
      "false                                 # [exit 1]",
      "(exit 3)                              # [exit 3]",
      'test "$NAME" = piw && tty -s           # a variable carries over, into a terminal too [terminal]',
      "tty -s",
      "true                                  # [exit 2]",
      "```",
    ].join("\n");
    const commands = extractCommands(doc, "runner.md");
    const result = await runDocCommands(commands, {
      doc: "runner.md",
      workDir: join(root, "runner-work"),
      startDir: home,
      checkoutDir: REPO,
      env: { ...process.env, HOME: home, SHELL: "/bin/bash" },
      timeoutMs: 60_000,
    });
    expect(result.results.map((r) => r.status)).toEqual([0, 0, 0, 1, 3, 0, 1, 0]);
    const unexpected = unexpectedEndings(result);
    expect(unexpected).toHaveLength(2);
    expect(unexpected[0]).toMatch(/^line 8: tty -s\n {2}exited 1, expected 0/);
    expect(unexpected[1]).toMatch(/^line 9: true .*\n {2}exited 0, expected 2/);
  });
});

describe("the commands of the docs, run against the packed package", () => {
  it("README.md: install from the packed tarball, a first workflow, and a run from the checkout", async () => {
    const home = freshHome("readme-home");
    await checkDoc("README.md", home, docEnv(home));
    // The piw the commands used is the one the README installed, from the tarball it packed.
    expect(existsSync(join(home, ".npm-global", "bin", "piw"))).toBe(true);
    expect(existsSync(join(home, ".local", "piw-pi", "node_modules", "piw", "dist", "extension.js"))).toBe(
      true,
    );
    expect(readFileSync(join(home, ".pi", "agent", "settings.json"), "utf8")).toContain(
      "piw-pi/node_modules/piw",
    );
  }, 900_000);

  describe("with piw installed from the tarball, as the README installs it", () => {
    let home: string;
    let env: NodeJS.ProcessEnv;

    beforeAll(async () => {
      home = freshHome("installed-home");
      env = docEnv(home);
      const tarball = await packPiw(home, env);
      await run("npm", ["i", "-g", tarball], { cwd: home, env, timeout: 300_000 });
    }, 360_000);

    it("docs/quickstart.md: write, run, inspect, wait at a checkpoint, answer it, stop the host", async () => {
      await checkDoc("docs/quickstart.md", home, env);
      const workflows = join(home, "piw-quickstart", ".pi", "workflows");
      expect(existsSync(join(workflows, "hello.workflow.ts"))).toBe(true);
      expect(existsSync(join(home, ".pi", "agent", "workflows", "state.db"))).toBe(true);
    }, 900_000);

    it("docs/nodes: each page's example runs from a checkout", async () => {
      const pages = Object.keys(EXPECTED).filter((doc): doc is Doc => doc.startsWith("docs/nodes/"));
      for (const doc of pages) await checkDoc(doc, REPO, env);
      expect(readFileSync(join(home, "tmp", "piw-action-example.log"), "utf8")).toBe("first line\n");
    }, 900_000);
  });
});
