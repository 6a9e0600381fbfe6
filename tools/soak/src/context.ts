import type { SoakHost } from "./host.js";
import type { SeededRandom } from "./seeded-random.js";
import type { SoakSettings } from "./settings.js";
import type { SoakTally } from "./tally.js";

/** The soak's scratch folder and the files in it. */
export interface Scratch {
  /** The runs' working folder. */
  root: string;
  /** The host's state: its store and socket. */
  stateDir: string;
  /** One line per execution of a managed effect, written before its work. */
  ledger: string;
  hostLog: string;
}

/** What every part of one soak shares. */
export interface SoakContext {
  settings: SoakSettings;
  scratch: Scratch;
  host: SoakHost;
  random: SeededRandom;
  tally: SoakTally;
}

/** Progress goes to stderr; stdout holds only the report. */
export const log = (line: string) => process.stderr.write(`${line}\n`);
