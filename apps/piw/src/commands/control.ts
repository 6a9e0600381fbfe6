import type { RunSummary } from "@piw/protocol";
import type { CliContext } from "../cli-context.js";
import { usageError } from "../cli-error.js";
import { ExitCode } from "../exit-codes.js";
import { followOrDetach } from "../follow-or-detach.js";
import { controlOutput } from "../output-schemas.js";
import { COMMAND_TABLE } from "../command-table.js";
import { parseCommandLine } from "../parse-command-line.js";
import { requirePersonAtTerminal } from "../person-at-terminal.js";
import { parseJsonArgument } from "../preflight.js";
import { runStateWord } from "../render-words.js";
import { COMMAND_USAGE } from "../usage.js";
import { runIdArgument, savedValue } from "./run-arguments.js";

/** `piw cancel <runId>`. */
export function cancelCommand(ctx: CliContext, args: string[]): Promise<ExitCode> {
  return controlRun(ctx, args, "cancel", (run, runId) =>
    run.status === "cancelled"
      ? `cancelled ${runId}`
      : `cancel requested for ${runId} (${runStateWord(run)}); it stops at the next boundary`,
  );
}

/**
 * `piw pause <runId>`: a starting or running run parks at its next node boundary (the node under way
 * finishes and is saved first). `piw resume` goes on from there.
 */
export function pauseCommand(ctx: CliContext, args: string[]): Promise<ExitCode> {
  return controlRun(ctx, args, "pause", (run, runId) =>
    run.status === "parked"
      ? `paused ${runId}; go on with: piw resume ${runId}`
      : `pause requested for ${runId} (${runStateWord(run)}); it parks at the next node boundary`,
  );
}

/** One host request on a run ID, then one line on what it did; a refusal is printed by the caller. */
async function controlRun(
  ctx: CliContext,
  args: string[],
  command: "cancel" | "pause",
  said: (run: RunSummary, runId: string) => string,
): Promise<ExitCode> {
  const { values, positionals } = parseCommandLine(command, args, COMMAND_TABLE[command].options);
  if (values.help) {
    ctx.print(COMMAND_USAGE[command]);
    return ExitCode.ok;
  }
  const runId = runIdArgument(command, positionals);
  const host = await ctx.host();
  const method = command === "cancel" ? "runs.cancel" : "runs.pause";
  const run = savedValue(await host.call(method, { runId }), runId);
  if (values.json) ctx.printJson(controlOutput(command, runId, run));
  else ctx.print(said(run, runId));
  if (command === "cancel" && !values.json) {
    // piw never removes a workspace: say where the cancelled run's work stays.
    const view = await host.call("runs.get", { runId });
    for (const ws of view?.workspaces ?? []) {
      ctx.print(`workspace left for you: ${ws.path} (${ws.mode}, branch ${ws.branch})`);
    }
  }
  return ExitCode.ok;
}

/** `piw answer <runId> <json>`: the continuation is a new run, followed like `piw run`. */
export async function answerCommand(ctx: CliContext, args: string[]): Promise<ExitCode> {
  const { values, positionals } = parseCommandLine("answer", args, COMMAND_TABLE.answer.options);
  if (values.help) {
    ctx.print(COMMAND_USAGE.answer);
    return ExitCode.ok;
  }
  const [first, answerText, ...extra] = positionals;
  if (answerText === undefined) throw usageError("piw answer needs a run ID and a JSON answer", "answer");
  if (extra.length > 0) {
    throw usageError(`unexpected argument ${JSON.stringify(extra[0])} (quote the JSON answer)`, "answer");
  }
  const runId = runIdArgument("answer", first === undefined ? [] : [first]);
  const answer = parseJsonArgument(answerText, "the answer");
  // `piw answer` gives a person's answer, so it asks for a person's terminal outside Pi. Nothing skips
  // the check, or the model could too.
  requirePersonAtTerminal(ctx.io.env);
  const host = await ctx.host();
  // The host checks the answer against the checkpoint's saved schema before it saves anything.
  const next = savedValue(await host.call("runs.answer", { runId, answer, answerer: "human" }), runId);
  const json = values.json === true;
  if (!json) ctx.print(ctx.style.dim(`continuing ${runId} as run ${next.runId}`));
  const detach = values.detach === true;
  return followOrDetach(ctx, host, { command: "answer", runId: next.runId, fromRunId: runId, detach, json });
}

/** `piw restart <runId>`: a new run of the same workflow and input, followed. */
export async function restartCommand(ctx: CliContext, args: string[]): Promise<ExitCode> {
  const { values, positionals } = parseCommandLine("restart", args, COMMAND_TABLE.restart.options);
  if (values.help) {
    ctx.print(COMMAND_USAGE.restart);
    return ExitCode.ok;
  }
  const runId = runIdArgument("restart", positionals);
  const host = await ctx.host();
  const next = savedValue(await host.call("runs.restart", { runId }), runId);
  const json = values.json === true;
  if (!json) ctx.print(ctx.style.dim(`restarting ${runId} as run ${next.runId}`));
  const detach = values.detach === true;
  return followOrDetach(ctx, host, { command: "restart", runId: next.runId, fromRunId: runId, detach, json });
}

/**
 * `piw resume <runId>`: a parked run goes on, followed. A run parked at an unsettled manual effect
 * first needs `--happened <json>` or `--not-happened`: only a person knows whether it took place.
 */
export async function resumeCommand(ctx: CliContext, args: string[]): Promise<ExitCode> {
  const { values, positionals } = parseCommandLine("resume", args, COMMAND_TABLE.resume.options);
  if (values.help) {
    ctx.print(COMMAND_USAGE.resume);
    return ExitCode.ok;
  }
  const runId = runIdArgument("resume", positionals);
  if (values.happened !== undefined && values["not-happened"]) {
    throw usageError("give either --happened <json> or --not-happened, not both", "resume");
  }
  const said =
    values.happened !== undefined
      ? { happened: true as const, value: parseJsonArgument(values.happened, "--happened") }
      : values["not-happened"]
        ? { happened: false as const }
        : undefined;
  const json = values.json === true;
  const note = (line: string) => (json ? undefined : ctx.print(line));
  const host = await ctx.host();
  const run = await host.call("runs.get", { runId });
  const reason = run?.recoveryReason;
  if (reason?.code === "manual_effect_unsettled" && run?.status === "parked") {
    if (said === undefined) {
      throw usageError(
        `run ${runId} stopped at manual effect ${reason.effectId}, which was started but never settled; ` +
          `check whether it happened, then: piw resume ${runId} --happened '<result json>' or --not-happened`,
        "resume",
      );
    }
    savedValue(await host.call("runs.resolveEffect", { runId, effectId: reason.effectId, ...said }), runId);
    note(
      ctx.style.dim(
        `settled manual effect ${reason.effectId} (${said.happened ? "it happened" : "it did not happen"}); resumed ${runId}`,
      ),
    );
  } else {
    if (said !== undefined) {
      throw usageError(
        `run ${runId} is not parked at an unsettled manual effect; resume it without --happened/--not-happened`,
        "resume",
      );
    }
    const acceptChanges = values["accept-changes"] === true;
    savedValue(await host.call("runs.resume", { runId, ...(acceptChanges ? { acceptChanges } : {}) }), runId);
    note(ctx.style.dim(`resumed ${runId}${acceptChanges ? " on its workflow file as it is now" : ""}`));
  }
  const detach = values.detach === true;
  return followOrDetach(ctx, host, { command: "resume", runId, fromRunId: runId, detach, json });
}
