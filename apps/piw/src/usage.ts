/** Help texts. Each command's text is what `piw <command> --help` prints. */
import { DEFAULT_AGENT_DIR_DISPLAY } from "@piw/state-dir";

const USER_WORKFLOWS = `${DEFAULT_AGENT_DIR_DISPLAY}/workflows`;

export const MAIN_USAGE = `piw — run and follow durable workflows from a shell

Usage: piw <command> [options]
       piw                             (in a terminal) the interactive viewer

Commands:
  view [runId]                      the viewer: run list, live graph, replay, inspector
  run <name|path> [task words...]   start a workflow and follow it live
  list                              list runs
  status <runId>                    show a run: status, nodes, recovery reason, error
  cancel <runId>                    cancel a run
  pause <runId>                     pause a run at its next node boundary
  answer <runId> <json>             answer a waiting checkpoint, then follow the continuation
  restart <runId>                   run a finished run again from the start, then follow it
  resume <runId>                    resume a parked run (settling a manual effect), then follow it
  host status | host stop           show or stop the background host

Options:
  -h, --help     help for piw or for any command (piw run --help)
  -V, --version  the version of piw

Environment:
  PIW_HOME           state folder (default ${USER_WORKFLOWS}, or $PI_CODING_AGENT_DIR/workflows)
  PIW_HOST_COMMAND   how to start the host, as a JSON array (default: the built piw-host)
  PIW_PREFLIGHT_TIMEOUT_MS   how long a workflow file may take to load (default 10000)
  NO_COLOR           no colour (there is none either when output is not a terminal)

Exit codes:
  0 completed (or the command worked)   1 failed, timed out, or the command failed
  3 waiting for an answer               4 cancelled
  5 parked: needs a person              64 usage or input error
  69 host unavailable                   130 detached with Ctrl-C (the run goes on)`;

const FOLLOWING = `While following: one line per node change (state, path, kind, visit, duration), then the
outcome; the exit code says how the run ended (see piw --help). Ctrl-C asks whether to cancel the
run or detach; without a terminal it detaches.`;

export const COMMAND_USAGE = {
  run: `Usage: piw run <name|path> [task words...] [options]

Start a workflow and follow it. <name> is looked up in ./.pi/workflows/, then
${USER_WORKFLOWS}/ (Pi's agent folder), then the built-ins; a path names a <name>.workflow.ts file.
Before anything is saved the workflow is compiled and the input checked. Agent steps run in
isolated Pi sessions with your Pi settings, models and credentials; a step pinned to the Pi
conversation (session: "conversation") is refused here.

Input: task words become {"task": "<the words>"}; --input-json gives the whole input instead.

Options:
  --input-json <json>   the run's input as JSON
  --detach              print the run ID and exit instead of following
  -h, --help

${FOLLOWING}

Examples:
  piw run examples/hello.workflow.ts "say hi"
  piw run approval --input-json '{"change": "bump zod"}'`,

  view: `Usage: piw view [runId] [options]

Open the interactive viewer: the run list, or the run's graph followed live. Left and right replay
the run's recorded events; enter opens the inspector of a node; ? lists every key.

Options:
  --once          print one snapshot (the run's graph, or the run list) and exit; no terminal needed
  --json          print the run's view (or the run list) as JSON
  --width <n>     snapshot width in columns (default: the terminal's, else 100)
  -h, --help`,

  list: `Usage: piw list [options]

List runs, newest first.

Options:
  --status <status>   only runs in this status (queued, starting, running, parked, done, failed,
                      cancelled); repeat or separate with commas
  --limit <n>         at most n runs (default 50)
  --json              the runs as JSON
  -h, --help`,

  status: `Usage: piw status <runId> [options]

Show a run: its status, every node, why it is parked (recovery reason) and its error, and
what its isolated agent steps cost (model, tokens, cost, duration), per step and in total.

Options:
  --json         the run's view as JSON
  --step <path>  the saved transcript of an isolated agent step (with --json: its session records)
  -h, --help`,

  cancel: `Usage: piw cancel <runId>

Cancel a queued, running or parked run. Nodes that have not started never start.`,

  pause: `Usage: piw pause <runId>

Pause a starting or running run. The node under way finishes and is saved; the run then parks
(status parked, reason paused) until piw resume <runId>. A follower of the run (piw run) exits 5.`,

  answer: `Usage: piw answer <runId> <json> [options]

Answer the checkpoint a run is waiting at. The answer starts a continuation run that carries the
run's state forward; piw follows it like piw run. It gives a person's answer, so it runs only
from a terminal (exit 64 without one, for example from an agent's shell; nothing is sent).

Options:
  --detach     print the continuation's run ID and exit instead of following
  -h, --help

Example:
  piw answer approval-m3x1-4f2a '{"approved": true}'

${FOLLOWING}`,

  restart: `Usage: piw restart <runId> [options]

Run a finished run's workflow again, with the same input, as a new run; then follow it.

Options:
  --detach     print the new run ID and exit instead of following
  -h, --help`,

  resume: `Usage: piw resume <runId> [options]

Resume a parked run (paused, or stopped for a recovery reason); then follow it.

A run parked at a manual effect that was started but never settled (a crash in the middle of it)
needs a person's word first: check whether the effect happened, then say so.

A run whose workflow file was edited since it started fails on a plain resume (source_changed).
With --accept-changes it goes on under the edited file when its saved position still fits it (the
saved nodes are there, of the same kinds, and saved outputs match their schemas); otherwise it stays
parked and piw says why.

Options:
  --happened <json>   the effect happened; <json> is the value the action would have returned
  --not-happened      the effect did not happen; the resumed run performs it
  --accept-changes    resume on the workflow file as it is now, if the saved position fits it
  --detach            exit once the run is resumed instead of following
  -h, --help

Example:
  piw resume invoice-m3x1-4f2a --happened '{"invoiceId": "INV-7"}'`,

  host: `Usage: piw host status [--json]
       piw host stop

The host is the one background process per user that owns the state (PIW_HOME). piw starts it
when needed; it keeps running between commands.

  status   whether a host runs, its pid, state folder, workers and run counts
           (exit 69 when no host runs)
  stop     ask the host to stop; runs are saved and continue when it starts again`,
} as const;

export type CommandName = keyof typeof COMMAND_USAGE;
