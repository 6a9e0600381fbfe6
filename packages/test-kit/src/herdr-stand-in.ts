import { chmodSync, copyFileSync, existsSync, mkdirSync, readFileSync } from "node:fs";
import { delimiter, join } from "node:path";

/** One stand-in `herdr` on a PATH of its own, with the state and call log it keeps (herdr-stand-in.mjs). */
export interface HerdrStandIn {
  /** The folder of the `herdr` executable: put it first on PATH. */
  bin: string;
  /** Environment for a process that should find the stand-in (PATH and its state folder). */
  env: Record<string, string>;
  /** Every call so far, as the argument lists it got. */
  calls(): string[][];
  /** The stand-in's state: linked plugins and panes (with the environment each pane was opened with). */
  state(): HerdrStandInState;
}

interface HerdrStandInState {
  plugins: Array<{ plugin_id: string; plugin_root: string; version: string; enabled: boolean }>;
  panes: Array<{
    pane_id: string;
    tab_id: string;
    workspace_id: string;
    label: string | null;
    env: Record<string, string>;
  }>;
  focused?: string;
}

/** Install the stand-in in `dir` (created). Its first pane, `1-1`, is the caller's (Pi's). */
export function installHerdrStandIn(dir: string): HerdrStandIn {
  const bin = join(dir, "bin");
  mkdirSync(bin, { recursive: true });
  const herdr = join(bin, "herdr");
  copyFileSync(join(import.meta.dirname, "herdr-stand-in.mjs"), herdr);
  chmodSync(herdr, 0o755);
  const callsFile = join(dir, "calls.jsonl");
  const stateFile = join(dir, "state.json");
  return {
    bin,
    env: { PATH: `${bin}${delimiter}${process.env.PATH ?? ""}`, HERDR_STAND_IN_DIR: dir },
    calls: () =>
      existsSync(callsFile)
        ? readFileSync(callsFile, "utf8")
            .trim()
            .split("\n")
            .map((line) => (JSON.parse(line) as { args: string[] }).args)
        : [],
    state: () =>
      existsSync(stateFile)
        ? (JSON.parse(readFileSync(stateFile, "utf8")) as HerdrStandInState)
        : { plugins: [], panes: [] },
  };
}
