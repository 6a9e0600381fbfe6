import { createInterface } from "node:readline";
import type { HostConnection, HostUnavailable } from "@piw/client";
import type { RunView } from "@piw/protocol";
import { AgentProgressLines, NodeProgressLines, StepSpinner } from "./agent-progress-lines.js";
import type { CliContext } from "./cli-context.js";
import { ExitCode } from "./exit-codes.js";
import { NodeChangeTracker, renderFinalLines, settledWord } from "./render-run.js";
import type { RunStateWord } from "./render-words.js";

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
export async function followRun(ctx: CliContext, host: HostConnection, runId: string): Promise<ExitCode> {
  return (await followRunResult(ctx, host, runId, false)).code;
}

export function followRunResult(
  ctx: CliContext,
  host: HostConnection,
  runId: string,
  quiet: boolean,
): Promise<FollowResult> {
  const tracker = new NodeChangeTracker(ctx.style);
  const progress = new AgentProgressLines(ctx.style);
  const reports = new NodeProgressLines(ctx.style);
  const spinner = new StepSpinner(ctx.io.stdout, !quiet && ctx.style.enabled);
  let phase: FollowPhase = { kind: "watching" };
  let latest: RunView | undefined;
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
      resolve({ code, view: latest });
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
      // Views of one run only grow in revision; an older one (a fetch racing a push) is stale.
      if (phase.kind === "ended" || (latest !== undefined && view.revision < latest.revision)) return;
      latest = view;
      for (const line of tracker.changes(view)) show(line);
      for (const line of progress.changes(view)) show(line);
      for (const line of reports.changes(view)) show(line);
      if (phase.kind === "watching") spinner.update(view);
      const word = settledWord(view);
      const code = word === undefined ? undefined : EXIT_CODES[word];
      if (code !== undefined) end(code, renderFinalLines(view, ctx.style));
    };

    const detach = (): void => {
      end(
        ExitCode.detached,
        [`detached; run ${runId} goes on in the background`, `follow it with: piw status ${runId}`],
        true,
      );
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
