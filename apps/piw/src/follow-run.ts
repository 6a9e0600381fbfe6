import { createInterface } from "node:readline";
import type { HostConnection, HostUnavailable } from "@piw/client";
import type { RunView } from "@piw/protocol";
import { AgentProgressLines, NodeProgressLines, StepSpinner } from "./agent-progress-lines.js";
import type { CliContext } from "./cli-context.js";
import { ExitCode } from "./exit-codes.js";
import { NodeChangeTracker, renderFinalLines, settledWord } from "./render-run.js";
import type { RunStateWord } from "./render-words.js";
import type { Style } from "./style.js";

const EXIT_CODES: Record<RunStateWord, ExitCode | undefined> = {
  completed: ExitCode.ok,
  waiting: ExitCode.waiting,
  failed: ExitCode.failed,
  "timed out": ExitCode.failed,
  cancelled: ExitCode.cancelled,
  parked: ExitCode.parked,
  queued: undefined,
  starting: undefined,
  running: undefined,
};

// What the follower is doing; a Ctrl-C question holds back node lines until it is answered, and
// owns the terminal prompt until then.
type FollowPhase =
  | { kind: "watching" }
  | { kind: "asking"; held: string[]; question: Question }
  | { kind: "ended" };

/** How a followed run ended for `piw`: the exit code, and the last view seen (if any). */
export interface FollowResult {
  code: ExitCode;
  view: RunView | undefined;
}

/**
 * Follow a run live: one line per node change, then the closing lines; resolves with the exit code
 * for how the run ended. Ctrl-C asks whether to cancel or detach (detaches at once without a TTY).
 * `quiet` prints nothing on stdout (for --json, which prints the result instead).
 */
export async function followRun(
  ctx: CliContext,
  host: HostConnection,
  runId: string,
  start?: FollowStart,
): Promise<ExitCode> {
  return (await followRunResult(ctx, host, runId, false, start)).code;
}

/**
 * What a follower prints for each view of one run: the node, agent and progress lines of what changed,
 * and the exit code and closing lines once it settles. Held apart from the connection so `piw run`'s
 * quick route and the follower below print the same, and the follower can go on from where it stopped.
 */
export class RunFollowLines {
  private readonly tracker: NodeChangeTracker;
  private readonly progress: AgentProgressLines;
  private readonly reports: NodeProgressLines;
  /** The newest view taken. */
  latest: RunView | undefined;

  constructor(private readonly style: Style) {
    this.tracker = new NodeChangeTracker(style);
    this.progress = new AgentProgressLines(style);
    this.reports = new NodeProgressLines(style);
  }

  /** The lines a view adds, and how the run ended if it did; undefined for a stale view. */
  take(view: RunView): { lines: string[]; end?: { code: ExitCode; lines: string[] } } | undefined {
    // Views of one run only grow in revision; an older one (a fetch racing a push) is stale.
    if (this.latest !== undefined && view.revision < this.latest.revision) return undefined;
    this.latest = view;
    const lines = [
      ...this.tracker.changes(view),
      ...this.progress.changes(view),
      ...this.reports.changes(view),
    ];
    const word = settledWord(view);
    const code = word === undefined ? undefined : EXIT_CODES[word];
    return code === undefined
      ? { lines }
      : { lines, end: { code, lines: renderFinalLines(view, this.style) } };
  }
}

/** The end of a run's lines: the closing lines when it ended, detach's lines after Ctrl-C. */
export const detachLines = (runId: string): string[] => [
  `detached; run ${runId} goes on in the background`,
  `follow it with: piw status ${runId}`,
];

/**
 * Where a follower starts: `lines` already printed up to its latest view (the quick route's), and a
 * Ctrl-C that came while it was handed over, answered here.
 */
export interface FollowStart {
  lines: RunFollowLines;
  sigint: boolean;
}

export function followRunResult(
  ctx: CliContext,
  host: HostConnection,
  runId: string,
  quiet: boolean,
  start?: FollowStart,
): Promise<FollowResult> {
  const follow = start?.lines ?? new RunFollowLines(ctx.style);
  const spinner = new StepSpinner(ctx.io.stdout, !quiet && ctx.style.enabled);
  let phase: FollowPhase = { kind: "watching" };
  let unsubscribe: (() => Promise<void>) | undefined;

  return new Promise<FollowResult>((resolve) => {
    const end = (code: ExitCode, lines: string[], toStderr = false): void => {
      if (phase.kind === "ended") return;
      if (phase.kind === "asking") {
        phase.question.abandon();
        for (const line of phase.held) ctx.print(line);
      }
      phase = { kind: "ended" };
      spinner.stop();
      process.off("SIGINT", onSigint);
      host.off("disconnect", onDisconnect);
      host.off("unavailable", onUnavailable);
      for (const line of lines) {
        if (toStderr) ctx.warn(line);
        else if (!quiet) ctx.print(line);
      }
      void unsubscribe?.();
      resolve({ code, view: follow.latest });
    };

    const show = (line: string): void => {
      if (quiet) return;
      if (phase.kind === "asking") phase.held.push(line);
      else if (phase.kind === "watching") {
        spinner.clear();
        ctx.print(line);
      }
    };

    const onView = (view: RunView): void => {
      if (phase.kind === "ended") return;
      const taken = follow.take(view);
      if (taken === undefined) return;
      for (const line of taken.lines) show(line);
      if (phase.kind === "watching") spinner.update(view);
      if (taken.end !== undefined) end(taken.end.code, taken.end.lines);
    };

    const detach = (): void => {
      end(ExitCode.detached, detachLines(runId), true);
    };

    const onSigint = (): void => {
      if (phase.kind === "asking") {
        detach();
        return;
      }
      if (phase.kind !== "watching") return;
      if (!ctx.interactive) {
        detach();
        return;
      }
      spinner.stop();
      const question = askCancelOrDetach(ctx);
      phase = { kind: "asking", held: [], question };
      question.choice.then((choice) => {
        if (phase.kind !== "asking") return;
        const held = phase.held;
        phase = { kind: "watching" };
        for (const line of held) ctx.print(line);
        if (choice === "detach") {
          detach();
          return;
        }
        if (choice === "cancel") {
          ctx.warn(`cancelling ${runId}…`);
          host.call("runs.cancel", { runId }).then(
            (result) => {
              if (result.kind === "conflict" || result.kind === "recoveryRequired") {
                ctx.warn(
                  `could not cancel: ${result.kind === "conflict" ? result.evidence.kind : result.reason.message}`,
                );
              }
            },
            (error: unknown) =>
              ctx.warn(`could not cancel: ${error instanceof Error ? error.message : "error"}`),
          );
        }
      });
    };

    const onDisconnect = (error: HostUnavailable): void => {
      ctx.warn(`lost the host (${error.message}); reconnecting…`);
    };
    const onUnavailable = (error: HostUnavailable): void => {
      end(
        ExitCode.hostUnavailable,
        [`piw: ${error.message}`, `run ${runId} is saved; see it with: piw status ${runId}`],
        true,
      );
    };

    process.on("SIGINT", onSigint);
    if (start?.sigint === true) onSigint();
    host.on("disconnect", onDisconnect);
    host.on("unavailable", onUnavailable);
    host.subscribe(runId, onView).then(
      (stop) => {
        unsubscribe = stop;
        if (phase.kind === "ended") void stop();
      },
      (error: unknown) => {
        const message = error instanceof Error ? error.message : String(error);
        end(ExitCode.hostUnavailable, [`piw: cannot follow run ${runId}: ${message}`], true);
      },
    );
  });
}

type Choice = "cancel" | "detach" | "continue";

interface Question {
  choice: Promise<Choice>;
  /** The run ended while asking: take the prompt away (and give the terminal back). */
  abandon(): void;
}

/** Ask on the terminal; a second Ctrl-C while asking means detach. */
function askCancelOrDetach(ctx: CliContext): Question {
  const rl = createInterface({ input: ctx.io.stdin, output: ctx.io.stderr as NodeJS.WritableStream });
  let settled = false;
  let settle: (choice: Choice) => void = () => {};
  const choice = new Promise<Choice>((resolve) => {
    settle = (picked) => {
      if (settled) return;
      settled = true;
      rl.close();
      resolve(picked);
    };
  });
  rl.on("SIGINT", () => settle("detach"));
  rl.on("close", () => settle("continue"));
  rl.question("\ncancel the run or detach? [c/d] ", (answer) => {
    const first = answer.trim().toLowerCase()[0];
    settle(first === "c" ? "cancel" : first === "d" ? "detach" : "continue");
  });
  return {
    choice,
    abandon: () => {
      ctx.warn("");
      settle("continue");
    },
  };
}
