import { QuickSession, quickRequestKey } from "@piw/client";
import {
  type ClientParams,
  quickReservedRun,
  quickRunView,
  quickSubscriptionId,
  type RunView,
} from "@piw/protocol";
import { StepSpinner } from "./agent-progress-lines.js";
import type { CliContext, CliIo } from "./cli-context.js";
import { ExitCode } from "./exit-codes.js";
import { detachLines, RunFollowLines } from "./follow-run.js";
import { loadCli } from "./load-cli.js";
import { type PreparedRun, preflight, reserveParams } from "./preflight.js";
import { runTitleLine } from "./render-run.js";
import { colorWanted, createStyle, type Style } from "./style.js";

/** How the quick follower stopped: the run ended (or was detached), or the full follower goes on. */
type QuickFollowEnd = { kind: "ended"; code: ExitCode } | { kind: "handover"; sigint: boolean };

/** Views pushed before the subscription's ID is known that are kept (as the full client keeps them). */
const MAX_EARLY_VIEWS = 100;

/**
 * Plain `piw run <file-or-name> [task words]` (no options) against a running host, by the quick route:
 * the preflight (whose cached launch is checked without zod), `runs.reserve`, `runs.subscribe` and the
 * run's views go through a QuickSession, and what it prints is what `runCommand` prints. Resolves with
 * the exit code; undefined, having done nothing, when no host runs (the full CLI starts one).
 * Anything else the quick checks do not take goes to the full CLI without repeating a side effect: a
 * preflight refusal is said by it; after the reserve was sent, the full route sends it again with the
 * same request key (which adopts the run saved by the first) and follows on from the last view shown.
 */
export async function quickRun(stateDir: string, argv: string[], io: CliIo): Promise<ExitCode | undefined> {
  const [, ref, ...words] = argv;
  if (ref === undefined) return undefined;
  // `launching`: the host wakes its idle worker while the preflight runs, as for the full route.
  const session = QuickSession.open(stateDir, { launching: true });
  if (session === undefined) return undefined;
  const handOver = async (action: (ctx: CliContext) => Promise<ExitCode>): Promise<ExitCode> => {
    session.close();
    const { withCliContext } = await loadCli(argv);
    return withCliContext(argv, io, action);
  };

  let prepared: PreparedRun;
  let params: ClientParams<"runs.reserve">;
  try {
    prepared = await preflight({ ref, cwd: io.cwd, words, inputJson: undefined }, io.env);
    params = { ...reserveParams(prepared, { cwd: io.cwd, env: io.env }), requestKey: quickRequestKey() };
  } catch (error) {
    // Nothing was saved: the full CLI says the refusal (or the failure) its own way.
    return handOver(() => Promise.reject(error));
  }
  for (const note of prepared.notes) io.stderr.write(`piw: ${note}\n`);

  const style = createStyle(colorWanted(io.stdout, io.env));
  const lines = new RunFollowLines(style);
  const reserved = await session.call("runs.reserve", params, quickReservedRun);
  const fullRoute = (titleShown: boolean, sigint: boolean) =>
    handOver(async (ctx) => {
      const { reserveAndFollow } = await import("./commands/run.js");
      const start = { lines, sigint };
      return reserveAndFollow(ctx, await ctx.host({ launching: true }), prepared, params, {
        json: false,
        detach: false,
        titleShown,
        start,
      });
    });
  if (reserved === undefined) return fullRoute(false, false);

  io.stdout.write(`${runTitleLine(style, prepared, reserved.runId)}\n`);
  const interactive = io.stdin.isTTY === true && io.stderr.isTTY === true;
  const end = await followQuick(session, reserved.runId, lines, io, style, interactive);
  return end.kind === "ended" ? end.code : fullRoute(true, end.sigint);
}

/** Follow the run's views on the session as `followRun` does, until it ends or a view is not plain. */
function followQuick(
  session: QuickSession,
  runId: string,
  lines: RunFollowLines,
  io: CliIo,
  style: Style,
  interactive: boolean,
): Promise<QuickFollowEnd> {
  const spinner = new StepSpinner(io.stdout, style.enabled);
  const print = (line: string) => io.stdout.write(`${line}\n`);
  return new Promise((resolve) => {
    let subscriptionId: string | undefined;
    const early: unknown[] = [];
    let done = false;
    const finish = (end: QuickFollowEnd, after: () => void = () => {}): void => {
      if (done) return;
      done = true;
      spinner.stop();
      process.off("SIGINT", onSigint);
      session.close();
      after();
      resolve(end);
    };
    const handover = () => finish({ kind: "handover", sigint: false });

    const onView = (data: unknown): void => {
      if (done) return;
      const view = viewOf(data, subscriptionId);
      if (view === undefined) {
        handover();
        return;
      }
      const taken = lines.take(view);
      if (taken === undefined) return;
      for (const line of taken.lines) {
        spinner.clear();
        print(line);
      }
      spinner.update(view);
      const ended = taken.end;
      if (ended !== undefined) finish({ kind: "ended", code: ended.code }, () => ended.lines.forEach(print));
    };

    const onSigint = (): void => {
      // Without a terminal to ask on, Ctrl-C detaches at once; with one, the full follower asks.
      if (interactive) {
        finish({ kind: "handover", sigint: true });
        return;
      }
      finish({ kind: "ended", code: ExitCode.detached }, () => {
        for (const line of detachLines(runId)) io.stderr.write(`${line}\n`);
      });
    };

    process.on("SIGINT", onSigint);
    session.listen((push, data) => {
      if (push !== "run.view") {
        handover();
        return;
      }
      if (subscriptionId !== undefined) {
        onView(data);
        return;
      }
      if (early.length >= MAX_EARLY_VIEWS) {
        handover();
        return;
      }
      early.push(data);
    }, handover);
    void session.call("runs.subscribe", { runId }, quickSubscriptionId).then((id) => {
      if (id === undefined) {
        handover();
        return;
      }
      subscriptionId = id;
      for (const data of early.splice(0)) onView(data);
    });
  });
}

/** A `run.view` push of this subscription whose view the quick check takes. */
function viewOf(data: unknown, subscriptionId: string | undefined): RunView | undefined {
  if (typeof data !== "object" || data === null || Array.isArray(data)) return undefined;
  const push = data as Record<string, unknown>;
  if (Object.keys(push).sort().join(",") !== "subscriptionId,view" || push.subscriptionId !== subscriptionId)
    return undefined;
  return quickRunView(push.view);
}
