import { compute, defineWorkflow, type NodeContext, shell } from "piw";
import { z } from "zod";

// The verify half of autoimplement: which commands check the change, running one, and what a
// failure hands to the fix step.

const commandText = z.string().trim().min(1).max(2000);

/** A check as the input may give one: a command line, or a named command. */
const checkInputSchema = z.union([
  commandText,
  z.object({ name: z.string().trim().min(1).max(80).optional(), command: commandText }),
]);

/** `checks`: one command per line, a list of commands, or a list of named commands. */
export const checksInputSchema = z.union([z.string().max(8000), z.array(checkInputSchema).max(20)]);
export type ChecksInput = z.infer<typeof checksInputSchema>;

export const checkSchema = z.object({ name: z.string(), command: z.string() });
export type Check = z.infer<typeof checkSchema>;

/** A check's name from its command: the command, cut to fit a status line. */
const nameOf = (command: string): string => (command.length <= 60 ? command : `${command.slice(0, 59)}…`);

/** The checks the input gives, as named commands: blank lines and repeats dropped. */
export function givenChecks(checks: ChecksInput): Check[] {
  const items = typeof checks === "string" ? checks.split("\n") : checks;
  const found: Check[] = [];
  for (const item of items) {
    const command = (typeof item === "string" ? item : item.command).trim();
    if (command === "" || found.some((check) => check.command === command)) continue;
    const name = typeof item === "string" ? undefined : item.name;
    found.push({ name: name ?? nameOf(command), command });
  }
  return found;
}

/** What DETECT_FACTS reports about a repository: the files that say how it is checked. */
export interface RepositoryFacts {
  /** package.json's text, or null when there is none. */
  packageJson: string | null;
  /** The Makefile's text, or null. */
  makefile: string | null;
  /** Which of MARKER_FILES exist at the root. */
  files: readonly string[];
}

const MARKER_FILES = [
  "pnpm-lock.yaml",
  "yarn.lock",
  "bun.lock",
  "bun.lockb",
  "pyproject.toml",
  "pytest.ini",
  "setup.cfg",
  "tox.ini",
  "conftest.py",
  "Cargo.toml",
  "go.mod",
] as const;

/** The package.json scripts that check a change, in the order they are worth running. */
const SCRIPT_CHECKS = ["typecheck", "lint", "test"] as const;

/** npm's placeholder for a package without tests: running it only fails. */
const NO_TEST_PLACEHOLDER = /no test specified/;

function packageScripts(text: string): Record<string, string> {
  try {
    const parsed: unknown = JSON.parse(text);
    if (typeof parsed !== "object" || parsed === null || !("scripts" in parsed)) return {};
    const scripts = parsed.scripts;
    if (typeof scripts !== "object" || scripts === null) return {};
    return Object.fromEntries(
      Object.entries(scripts).filter((entry): entry is [string, string] => typeof entry[1] === "string"),
    );
  } catch {
    return {};
  }
}

function runner(files: readonly string[]): string {
  if (files.includes("pnpm-lock.yaml")) return "pnpm run";
  if (files.includes("yarn.lock")) return "yarn run";
  if (files.includes("bun.lock") || files.includes("bun.lockb")) return "bun run";
  return "npm run";
}

function usesPytest(facts: RepositoryFacts, text: (file: string) => string | null): boolean {
  if (facts.files.includes("pytest.ini") || facts.files.includes("conftest.py")) return true;
  if (/\[tool\.pytest/.test(text("pyproject.toml") ?? "")) return true;
  return /\[(tool:)?pytest\]/.test(text("setup.cfg") ?? "") || /\[pytest\]/.test(text("tox.ini") ?? "");
}

/**
 * The checks a repository declares, from its files alone: package.json's typecheck, lint and test
 * scripts (run with the package manager its lock file names), else a Makefile `test` target, else
 * pytest, `cargo test` and `go test ./...` for the projects that use them. Empty when nothing says.
 */
export function detectChecks(
  facts: RepositoryFacts,
  configs: Readonly<Record<string, string>> = {},
): Check[] {
  const found: Check[] = [];
  if (facts.packageJson !== null) {
    const scripts = packageScripts(facts.packageJson);
    const run = runner(facts.files);
    for (const script of SCRIPT_CHECKS) {
      const body = scripts[script];
      if (body === undefined || body.trim() === "") continue;
      if (script === "test" && NO_TEST_PLACEHOLDER.test(body)) continue;
      found.push({ name: script, command: `${run} ${script}` });
    }
  }
  if (found.some((check) => check.name === "test")) return found;
  if (facts.makefile !== null && /^test\s*:/m.test(facts.makefile)) {
    return [...found, { name: "make test", command: "make test" }];
  }
  const text = (file: string): string | null => configs[file] ?? null;
  if (usesPytest(facts, text)) found.push({ name: "pytest", command: "python3 -m pytest -q" });
  if (facts.files.includes("Cargo.toml")) found.push({ name: "cargo test", command: "cargo test" });
  if (facts.files.includes("go.mod")) found.push({ name: "go test", command: "go test ./..." });
  return found;
}

const FACT_FILES = ["package.json", "Makefile", "pyproject.toml", "setup.cfg", "tox.ini"] as const;

/**
 * Prints each fact file as `==<name>` and its first 64 KiB, then `==markers` and the marker files
 * that exist, one a line. Runs in the workspace; reads, never writes.
 */
export const DETECT_FACTS = `for f in ${FACT_FILES.join(" ")}; do
  if [ -f "$f" ]; then printf '==%s\\n' "$f"; head -c 65536 "$f"; printf '\\n'; fi
done
printf '==markers\\n'
for f in ${MARKER_FILES.join(" ")}; do [ -e "$f" ] && printf '%s\\n' "$f"; done
exit 0`;

/** DETECT_FACTS's report, as facts and the config texts pytest detection reads. */
export function parseFacts(stdout: string): { facts: RepositoryFacts; configs: Record<string, string> } {
  const sections: Record<string, string> = {};
  let current: string | null = null;
  const lines: string[] = [];
  const close = () => {
    if (current !== null) sections[current] = lines.join("\n");
    lines.length = 0;
  };
  for (const line of stdout.split("\n")) {
    const header = /^==(package\.json|Makefile|pyproject\.toml|setup\.cfg|tox\.ini|markers)$/.exec(line);
    if (header?.[1] === undefined) {
      lines.push(line);
      continue;
    }
    close();
    current = header[1];
  }
  close();
  const markers = (sections.markers ?? "").split("\n").filter((file) => file.trim() !== "");
  const configs: Record<string, string> = {};
  for (const file of ["pyproject.toml", "setup.cfg", "tox.ini"]) {
    const text = sections[file];
    if (text !== undefined) configs[file] = text;
  }
  return {
    facts: {
      packageJson: sections["package.json"] ?? null,
      makefile: sections.Makefile ?? null,
      files: markers,
    },
    configs,
  };
}

/** How much of a failing check's output the fix step gets: its end, where the failure usually is. */
const TAIL_MAX_LINES = 80;
const TAIL_MAX_CHARS = 6000;

/** The last lines of `text`, at most `maxLines` lines and `maxChars` characters, and how much was left out. */
export function outputTail(
  text: string,
  maxLines: number = TAIL_MAX_LINES,
  maxChars: number = TAIL_MAX_CHARS,
): { tail: string; omittedLines: number } {
  const lines = text.replace(/\s+$/, "").split("\n");
  let kept = lines.slice(-maxLines);
  let joined = kept.join("\n");
  while (joined.length > maxChars && kept.length > 1) {
    kept = kept.slice(1);
    joined = kept.join("\n");
  }
  if (joined.length > maxChars) joined = joined.slice(-maxChars);
  const omittedLines = lines.length === 1 && lines[0] === "" ? 0 : lines.length - kept.length;
  return { tail: joined, omittedLines };
}

export const checkResultSchema = z.object({
  name: z.string(),
  command: z.string(),
  passed: z.boolean(),
  /** null when the command did not exit by itself (a deadline, a signal). */
  exitCode: z.number().int().nullable(),
  tail: z.string(),
  omittedLines: z.number().int().min(0),
});
export type CheckResult = z.infer<typeof checkResultSchema>;

/** A check's deadline: a test suite may be slow, but not forever. */
const CHECK_TIMEOUT_MS = 30 * 60_000;

type CheckCtx = NodeContext<Check>;

/**
 * One check, a map branch: the command in the workspace with its output merged, exit 0 to `done`,
 * any other exit (or its deadline) routed to `failed`, which keeps the end of what it printed.
 */
export const runCheck = defineWorkflow({
  name: "autoimplement-check",
  title: "A check",
  input: checkSchema,
  startAt: "run",
  nodes: {
    run: shell({
      title: "Run the check",
      exec: ({ input }: CheckCtx) => ["sh", "-c", `{\n${input.command}\n} 2>&1`],
      parse: ({ exitCode, stdout }, { input }: CheckCtx): CheckResult => ({
        ...input,
        passed: true,
        exitCode,
        ...outputTail(stdout, 20, 1500),
      }),
      timeoutMs: CHECK_TIMEOUT_MS,
    }),
    failed: compute({
      title: "The check failed",
      run: ({ input, failures }: CheckCtx): CheckResult => {
        const failure = failures.run;
        const report = failure?.shell;
        if (report === undefined) {
          const why = failure?.status === "timed_out" ? "ran past its deadline" : "did not finish";
          return { ...input, passed: false, exitCode: null, tail: `The command ${why}.`, omittedLines: 0 };
        }
        return { ...input, passed: false, exitCode: report.exitCode, ...outputTail(report.stdout) };
      },
    }),
  },
  edges: {
    run: { to: "done", onFailure: "failed" },
    failed: { to: "done" },
  },
});
