/**
 * Every `piw` command and flag, once: each command parses its arguments with the options here,
 * `piw <command> --help` prints them (usage.ts), and `pnpm docs:cli` writes docs/cli.md from them.
 */
import { DEFAULT_AGENT_DIR_DISPLAY, PIW_ENV } from "@piw/state-dir";
import { ACCEPTED_STATE_WORDS } from "./state-filter.js";

export interface OptionSpec {
  readonly type: "string" | "boolean";
  readonly short?: string;
  readonly multiple?: boolean;
  /** The value's placeholder in help, e.g. `<json>`. */
  readonly value?: string;
  readonly help: string;
}

export interface CommandSpec {
  /** The command with its arguments, as the command list shows it. */
  readonly synopsis: string;
  readonly summary: string;
  /** `Usage:` lines after `piw `. */
  readonly usage: readonly string[];
  readonly about: string;
  readonly options: Readonly<Record<string, OptionSpec>>;
  /** Text after the options (how following works, sub-commands). */
  readonly notes?: string;
  readonly examples?: readonly string[];
  /** Whether --json prints an object with a `schema` version (output-schemas.ts). */
  readonly json: boolean;
}

const USER_WORKFLOWS = `${DEFAULT_AGENT_DIR_DISPLAY}/workflows`;

const HELP = { help: { type: "boolean", short: "h", help: "this help" } } as const;
const JSON_FLAG = { json: { type: "boolean", help: "print one JSON object (see docs/cli.md)" } } as const;
const DETACH = {
  detach: { type: "boolean", help: "print the run ID and exit instead of following" },
} as const;

const FOLLOWING = `While following: one line per node change (state, path, kind, visit, duration), then the
outcome and a completed run's output; the exit code says how the run ended (see piw --help). Ctrl-C
asks whether to cancel the run or detach; without a terminal it detaches. With --json nothing is
printed until the end, then one object: the run's last view, its state and the exit code.`;

export const COMMAND_TABLE = {
  view: {
    synopsis: "view [runId]",
    summary: "the viewer: run list, live graph, replay, inspector",
    usage: ["view [runId] [options]"],
    about: `Open the interactive viewer: the run list, or the run's graph followed live. Left and right replay
the run's recorded events; enter opens the inspector of a node; ? lists every key.`,
    options: {
      ...HELP,
      once: { type: "boolean", help: "print one snapshot (the run's graph, or the run list) and exit" },
      json: { type: "boolean", help: "print the run's view (or the run list) as JSON" },
      width: {
        type: "string",
        value: "<n>",
        help: "snapshot width in columns (default: the terminal's, else 100)",
      },
    },
    json: false,
  },
  run: {
    synopsis: "run <name|path> [task words...]",
    summary: "start a workflow and follow it live",
    usage: ["run <name|path> [task words...] [options]"],
    about: `Start a workflow and follow it. <name> is looked up in ./.pi/workflows/, then
${USER_WORKFLOWS}/ (Pi's agent folder), then the built-ins (piw workflows lists them); a path
names a <name>.workflow.ts file. Before anything is saved the workflow is compiled and the input
checked. Agent steps run in isolated Pi sessions with your Pi settings, models and credentials;
a step pinned to the Pi conversation (session: "conversation") is refused here.

Input: task words become {"task": "<the words>"}, or the field the workflow names with textInput
(piw workflows shows it); --input-json gives the whole input instead. A key the workflow's input does
not have is refused, with the keys it does have.`,
    options: {
      ...HELP,
      ...JSON_FLAG,
      "input-json": { type: "string", value: "<json>", help: "the run's input as JSON" },
      detach: {
        type: "boolean",
        help: "print the run ID and exit instead of following (only the ID when stdout is not a terminal)",
      },
    },
    notes: FOLLOWING,
    examples: [
      `piw run examples/hello.workflow.ts "say hi"`,
      `piw run approval --input-json '{"change": "bump zod"}'`,
    ],
    json: true,
  },
  workflows: {
    synopsis: "workflows",
    summary: "list the workflows a name starts here",
    usage: ["workflows [options]"],
    about: `List the workflows piw run <name> finds from this folder: the project's .pi/workflows/, then
${USER_WORKFLOWS}/, then the built-ins, each with its title, its input keys (? marks an
optional key) and where it comes from. Each file is loaded in a short-lived child process; a file
that does not load is listed with its problem.`,
    options: { ...HELP, ...JSON_FLAG },
    json: true,
  },
  list: {
    synopsis: "list",
    summary: "list runs",
    usage: ["list [options]"],
    about: "List runs, newest first.",
    options: {
      ...HELP,
      ...JSON_FLAG,
      status: {
        type: "string",
        multiple: true,
        value: "<state>",
        help: `only runs in this state (${ACCEPTED_STATE_WORDS.join(", ")}); separate several with commas`,
      },
      limit: { type: "string", value: "<n>", help: "at most n runs, 1 to 1000 (default 50)" },
    },
    json: true,
  },
  status: {
    synopsis: "status <runId>",
    summary: "show a run: status, input, output, nodes, recovery reason, error",
    usage: ["status <runId> [options]"],
    about: `Show a run: its status, input, final output (folded when long), every node, why it is parked
(recovery reason) and its error. An answered checkpoint names the run that continues from it.
What its isolated agent steps cost (model, tokens, cost, duration) is shown per step and in total.
A running step shows the progress it reported (count, message, and an estimate that says how sure
it is) and an isolated agent step its latest tool call; a parallel node lists its steps under it,
branch by branch, with how its join is met.`,
    options: {
      ...HELP,
      ...JSON_FLAG,
      step: {
        type: "string",
        value: "<path>",
        help: "the saved transcript of an isolated agent step (with --json: its session records)",
      },
    },
    json: true,
  },
  cancel: {
    synopsis: "cancel <runId>",
    summary: "cancel a run",
    usage: ["cancel <runId> [options]"],
    about: "Cancel a queued, running or parked run. Nodes that have not started never start.",
    options: { ...HELP, ...JSON_FLAG },
    json: true,
  },
  pause: {
    synopsis: "pause <runId>",
    summary: "pause a run at its next node boundary",
    usage: ["pause <runId> [options]"],
    about: `Pause a starting or running run. The node under way finishes and is saved; the run then parks
(status parked, reason paused) until piw resume <runId>. A follower of the run (piw run) exits 5.`,
    options: { ...HELP, ...JSON_FLAG },
    json: true,
  },
  answer: {
    synopsis: "answer <runId> <json>",
    summary: "answer a waiting checkpoint, then follow the continuation",
    usage: ["answer <runId> <json> [options]"],
    about: `Answer the checkpoint a run is waiting at. The answer starts a continuation run that carries the
run's state forward; piw follows it like piw run. It gives a person's answer, so it runs only
from a terminal outside Pi: without one, or under Pi (its bash tool or a ! escape), it exits 77
and sends nothing.`,
    options: {
      ...HELP,
      ...JSON_FLAG,
      detach: { type: "boolean", help: "print the continuation's run ID and exit instead of following" },
    },
    notes: FOLLOWING,
    examples: [`piw answer approval-m3x1-4f2a '{"approved": true}'`],
    json: true,
  },
  restart: {
    synopsis: "restart <runId>",
    summary: "run a finished run again from the start, then follow it",
    usage: ["restart <runId> [options]"],
    about: "Run a finished run's workflow again, with the same input, as a new run; then follow it.",
    options: { ...HELP, ...JSON_FLAG, ...DETACH },
    notes: FOLLOWING,
    json: true,
  },
  resume: {
    synopsis: "resume <runId>",
    summary: "resume a parked run (settling a manual effect), then follow it",
    usage: ["resume <runId> [options]"],
    about: `Resume a parked run (paused, or stopped for a recovery reason); then follow it.

A run parked at a manual effect that was started but never settled (a crash in the middle of it)
needs a person's word first: check whether the effect happened, then say so.

A run whose workflow file was edited since it started fails on a plain resume (source_changed).
With --accept-changes it goes on under the edited file when its saved position still fits it (the
saved nodes are there, of the same kinds, and saved outputs match their schemas); otherwise it stays
parked and piw says why.`,
    options: {
      ...HELP,
      ...JSON_FLAG,
      happened: {
        type: "string",
        value: "<json>",
        help: "the effect happened; <json> is the value the action would have returned",
      },
      "not-happened": { type: "boolean", help: "the effect did not happen; the resumed run performs it" },
      "accept-changes": {
        type: "boolean",
        help: "resume on the workflow file as it is now, if the saved position fits it",
      },
      detach: { type: "boolean", help: "exit once the run is resumed instead of following" },
    },
    notes: FOLLOWING,
    examples: [`piw resume invoice-m3x1-4f2a --happened '{"invoiceId": "INV-7"}'`],
    json: true,
  },
  host: {
    synopsis: "host status | host stop",
    summary: "show or stop the background host",
    usage: ["host status [--json]", "host stop"],
    about: `The host is the one background process per user that owns the state (PIW_HOME). piw starts it
when needed; it keeps running between commands.`,
    options: { ...HELP, json: { type: "boolean", help: "host status as JSON" } },
    notes: `  status   whether a host runs, its pid, state folder, workers and run counts
           (exit 69 when no host runs)
  stop     ask the host to stop; runs are saved and continue when it starts again`,
    json: false,
  },
  herdr: {
    synopsis: "herdr sync",
    summary: "link (or relink) and enable piw's Herdr plugin",
    usage: ["herdr sync [--json]"],
    about: `Register the Herdr plugin this piw package carries (herdr-plugin.toml at the package root), so that
/piw in Pi inside Herdr can open the viewer in a pane. Herdr keeps the plugin's absolute path: after
piw is updated or installed elsewhere, run it again and it relinks the plugin to this package. It
links the plugin when Herdr has none, relinks one at another path or version, enables a disabled
one, and otherwise changes nothing; it prints what it did. It needs herdr on PATH (Herdr 0.7.0 or
newer); see docs/herdr.md.`,
    options: { ...HELP, ...JSON_FLAG },
    notes: "  sync     link or relink and enable the plugin, then print what was done",
    json: true,
  },
} as const satisfies Record<string, CommandSpec>;

export type CommandName = keyof typeof COMMAND_TABLE;

/** The environment piw reads: the user's `PIW_*` variables of the one table, and NO_COLOR. */
export const ENVIRONMENT: ReadonlyArray<{ name: string; help: string }> = [
  ...Object.values(PIW_ENV)
    .filter((variable) => variable.audience === "user")
    .map(({ name, help }) => ({ name, help })),
  { name: "NO_COLOR", help: "no colour (there is none either when output is not a terminal)" },
];
