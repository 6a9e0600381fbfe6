import { chmodSync, copyFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { delimiter, join } from "node:path";

/** One check as the stand-in's `gh pr checks --json name,bucket,link` reports it. */
export interface GhCheck {
  name: string;
  bucket: "pass" | "fail" | "pending" | "skipping" | "cancel";
  link: string;
}

/** What the stand-in answers from (gh-stand-in.mjs keeps it in `state.json`). */
export interface GhStandInState {
  /** `gh auth status` succeeds. */
  auth: boolean;
  prs: Array<{
    number: number;
    url: string;
    head: string;
    base: string;
    title: string;
    body: string;
    state: string;
  }>;
  /** What each `gh pr checks` call reports, in turn; the last one repeats. Empty: no checks at all. */
  checks: GhCheck[][];
  checksCalls: number;
  /** `gh run view <id> --log-failed` by Actions run id. */
  logs: Record<string, string>;
  /** The next `gh pr create` kills its parent (the worker) right after the PR exists. */
  crashAfterCreate?: boolean;
}

/** One stand-in `gh` on a PATH of its own, with the state and call log it keeps (gh-stand-in.mjs). */
export interface GhStandIn {
  /** The folder of the `gh` executable: put it first on PATH. */
  bin: string;
  /** Environment for a process that should find the stand-in (PATH and its state folder). */
  env: Record<string, string>;
  /** Every call so far, as the argument lists it got. */
  calls(): string[][];
  state(): GhStandInState;
}

/** Install the stand-in in `dir` (created), answering from `state`. */
export function installGhStandIn(dir: string, state: Partial<GhStandInState> = {}): GhStandIn {
  const bin = join(dir, "bin");
  mkdirSync(bin, { recursive: true });
  const gh = join(bin, "gh");
  copyFileSync(join(import.meta.dirname, "gh-stand-in.mjs"), gh);
  chmodSync(gh, 0o755);
  const callsFile = join(dir, "calls.jsonl");
  const stateFile = join(dir, "state.json");
  writeFileSync(
    stateFile,
    `${JSON.stringify({ auth: true, prs: [], checks: [], checksCalls: 0, logs: {}, ...state })}\n`,
  );
  return {
    bin,
    env: { PATH: `${bin}${delimiter}${process.env.PATH ?? ""}`, GH_STAND_IN_DIR: dir },
    calls: () =>
      existsSync(callsFile)
        ? readFileSync(callsFile, "utf8")
            .trim()
            .split("\n")
            .map((line) => (JSON.parse(line) as { args: string[] }).args)
        : [],
    state: () => JSON.parse(readFileSync(stateFile, "utf8")) as GhStandInState,
  };
}
