import { spawn } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";

/**
 * The shell commands a doc shows, and how its notes say they end. A note is a bracketed tag at the
 * end of a command's comment: `[exit 3]` (the exit status it must end with; 0 without one),
 * `[terminal]` (it runs on a pseudo-terminal), `[checkout]` (it runs in the repository) and
 * `[needs: …]` (it is not run here, for the reason given).
 */
export interface DocCommand {
  /** 1-based line of the command's first line in the doc. */
  line: number;
  /** The command as written, heredoc bodies and comments included. */
  text: string;
  exit: number;
  terminal: boolean;
  checkout: boolean;
  /** Why the command is not run; undefined when it is. */
  needs: string | undefined;
}

const RUNNABLE_FENCES = new Set(["bash", "sh", "shell"]);
const NOTE = /\[(exit|terminal|checkout|needs)\b[^\]]*\]/g;

/** The note tags of one command line: only what follows its first unquoted `#` counts. */
function notesOf(line: string): string[] {
  const hash = line.search(/(^|\s)#/);
  return hash < 0 ? [] : [...line.slice(hash).matchAll(NOTE)].map((m) => m[0]);
}

function heredocEnd(line: string): string | undefined {
  const match = /<<-?\s*(['"]?)([A-Za-z_][A-Za-z0-9_]*)\1/.exec(line);
  return match?.[2];
}

/** Every command of every `bash`/`sh` block, in order; `text` and other fences are prose. */
export function extractCommands(markdown: string, doc: string): DocCommand[] {
  const lines = markdown.split("\n");
  const commands: DocCommand[] = [];
  let i = 0;
  while (i < lines.length) {
    const fence = /^```(\S*)\s*$/.exec(lines[i] ?? "");
    i += 1;
    if (!fence) continue;
    const runnable = RUNNABLE_FENCES.has(fence[1] ?? "");
    while (i < lines.length && !/^```\s*$/.test(lines[i] ?? "")) {
      const first = lines[i] ?? "";
      if (!runnable || first.trim() === "" || first.trim().startsWith("#")) {
        i += 1;
        continue;
      }
      const start = i;
      const own: string[] = [];
      for (;;) {
        const line = lines[i] ?? "";
        own.push(line);
        i += 1;
        const end = heredocEnd(line);
        if (end !== undefined) {
          while (i < lines.length && (lines[i] ?? "").trim() !== end) i += 1;
          if (i >= lines.length) throw new Error(`${doc}:${start + 1}: heredoc ${end} is never closed`);
          i += 1;
          break;
        }
        if (!line.endsWith("\\") || i >= lines.length) break;
      }
      commands.push(parseNotes(doc, start + 1, own, lines.slice(start, i).join("\n")));
    }
    i += 1;
  }
  return commands;
}

function parseNotes(doc: string, line: number, own: string[], text: string): DocCommand {
  const command: DocCommand = { line, text, exit: 0, terminal: false, checkout: false, needs: undefined };
  for (const note of own.flatMap(notesOf)) {
    const exit = /^\[exit (\d+)\]$/.exec(note);
    const needs = /^\[needs: ([^\]]+)\]$/.exec(note);
    if (exit) command.exit = Number(exit[1]);
    else if (needs) command.needs = (needs[1] ?? "").trim();
    else if (note === "[terminal]") command.terminal = true;
    else if (note === "[checkout]") command.checkout = true;
    else
      throw new Error(
        `${doc}:${line}: unknown note ${note}; use [exit N], [terminal], [checkout] or [needs: …]`,
      );
  }
  if (command.terminal && command.checkout) throw new Error(`${doc}:${line}: [terminal] with [checkout]`);
  return command;
}

interface CommandResult {
  command: DocCommand;
  /** The exit status, or null when the script never got to the command. */
  status: number | null;
}

export interface DocRun {
  doc: string;
  results: CommandResult[];
  /** Everything the commands printed, each preceded by a `### <doc>:<line>` header. */
  output: string;
}

export interface RunOptions {
  doc: string;
  /** A folder of its own for the script, the exit statuses and the terminal commands. */
  workDir: string;
  /** Where the first command runs; `cd` in a command carries over to the next ones. */
  startDir: string;
  /** Where `[checkout]` commands run. */
  checkoutDir: string;
  env: NodeJS.ProcessEnv;
  timeoutMs: number;
}

function scriptFor(commands: DocCommand[], options: RunOptions): string {
  const rc = join(options.workDir, "rc");
  // Every assignment is exported, so the shell `script` starts for a [terminal] command sees it too.
  const out = ["set -a", `cd ${JSON.stringify(options.startDir)} || exit 90`];
  commands.forEach((command, index) => {
    if (command.needs !== undefined) return;
    const header = `### ${options.doc}:${command.line}`;
    out.push(`printf '%s\\n' ${JSON.stringify(header)}`);
    if (command.terminal) {
      const file = join(options.workDir, `terminal-${index}.sh`);
      writeFileSync(file, `${command.text}\n`);
      out.push(`script -qec ${JSON.stringify(`bash ${file}`)} /dev/null </dev/null`);
    } else if (command.checkout) {
      out.push(`( cd ${JSON.stringify(options.checkoutDir)} && {\n${command.text}\n} ) </dev/null`);
    } else {
      out.push(`{\n${command.text}\n} </dev/null`);
    }
    out.push(`echo "$?" > ${JSON.stringify(join(rc, String(index)))}`);
  });
  return `${out.join("\n")}\n`;
}

/**
 * Run a doc's commands in order, in one bash in a session of its own (so without a controlling
 * terminal, as in CI), and read back each command's exit status.
 */
export async function runDocCommands(commands: DocCommand[], options: RunOptions): Promise<DocRun> {
  mkdirSync(join(options.workDir, "rc"), { recursive: true });
  const script = join(options.workDir, "doc.sh");
  writeFileSync(script, scriptFor(commands, options));
  const child = spawn("bash", [script], {
    cwd: options.startDir,
    env: options.env,
    detached: true,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout.on("data", (chunk: Buffer) => {
    output += chunk.toString("utf8");
  });
  child.stderr.on("data", (chunk: Buffer) => {
    output += chunk.toString("utf8");
  });
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => {
      if (child.pid !== undefined) process.kill(-child.pid, "SIGKILL");
      output += `\n[the commands did not finish within ${options.timeoutMs} ms]\n`;
    }, options.timeoutMs);
    child.on("error", reject);
    child.on("close", () => {
      clearTimeout(timer);
      resolve();
    });
  });
  const results = commands.map((command, index): CommandResult => {
    const file = join(options.workDir, "rc", String(index));
    const status = existsSync(file) ? Number(readFileSync(file, "utf8").trim()) : null;
    return { command, status };
  });
  return { doc: options.doc, results, output };
}

/** The commands that ran and did not end as their notes say, with what they printed. */
export function unexpectedEndings(run: DocRun): string[] {
  return run.results
    .filter((r) => r.command.needs === undefined && r.status !== r.command.exit)
    .map((r) => {
      const header = `### ${run.doc}:${r.command.line}\n`;
      const at = run.output.indexOf(header);
      const printed = at < 0 ? "" : run.output.slice(at + header.length).split("\n### ")[0];
      const ended = r.status === null ? "did not run" : `exited ${r.status}`;
      return `line ${r.command.line}: ${r.command.text.split("\n")[0]}\n  ${ended}, expected ${r.command.exit}\n${(printed ?? "").slice(0, 2000)}`;
    });
}
