import type { HostConnection } from "@piw/client";
import {
  ansiTheme,
  plainTheme,
  renderRunTable,
  renderSnapshot,
  runViewerApp,
  type ViewerSource,
} from "@piw/viewer";
import type { CliContext } from "../cli-context.js";
import { CliError, usageError } from "../cli-error.js";
import { ExitCode } from "../exit-codes.js";
import { viewOutput } from "../output-schemas.js";
import { COMMAND_TABLE } from "../command-table.js";
import { parseCommandLine } from "../parse-command-line.js";
import { COMMAND_USAGE } from "../usage.js";
import { runIdArgument } from "./run-arguments.js";

/** The viewer's window onto the host: every read and every update goes through the host client. */
function hostViewerSource(connection: HostConnection): ViewerSource {
  return {
    listRuns: () => connection.call("runs.list", { limit: 500 }),
    getRun: (runId) => connection.call("runs.get", { runId }),
    history: (runId) => connection.call("runs.history", { runId }),
    conversation: (runId, path) => connection.call("runs.conversation", { runId, path }),
    watchRuns: (onView) => connection.subscribe(undefined, onView),
    onConnection: (listener) => {
      const lost = (error: Error) => listener({ kind: "reconnecting", message: error.message });
      const back = () => listener({ kind: "connected" });
      const gone = (error: Error) => listener({ kind: "unavailable", message: error.message });
      connection.on("disconnect", lost);
      connection.on("reconnect", back);
      connection.on("unavailable", gone);
      return () => {
        connection.off("disconnect", lost);
        connection.off("reconnect", back);
        connection.off("unavailable", gone);
      };
    },
  };
}

function parseWidth(raw: string | undefined, fallback: number | undefined): number {
  if (raw === undefined) return fallback ?? 100;
  const width = Number(raw);
  if (!Number.isInteger(width) || width < 20 || width > 1000) {
    throw usageError("--width takes a whole number from 20 to 1000", "view");
  }
  return width;
}

/** `piw view [runId] [--once] [--json]`, and `piw` with no arguments in a terminal. */
export async function viewCommand(ctx: CliContext, args: string[]): Promise<ExitCode> {
  const { values, positionals } = parseCommandLine("view", args, COMMAND_TABLE.view.options);
  if (values.help) {
    ctx.print(COMMAND_USAGE.view);
    return ExitCode.ok;
  }
  const runId = positionals.length === 0 ? undefined : runIdArgument("view", positionals);
  const snapshot = values.once === true || values.json === true;
  if (!snapshot && !(ctx.interactive && ctx.io.stdout.isTTY === true)) {
    throw usageError("the interactive viewer needs a terminal; use --once or --json for scripts", "view");
  }
  const host = await ctx.host();
  if (runId !== undefined) {
    const view = await host.call("runs.get", { runId });
    if (view === null) throw new CliError(`no run ${runId}`);
    if (values.json) {
      ctx.printJson(viewOutput(view));
      return ExitCode.ok;
    }
    if (snapshot) {
      const columns = (ctx.io.stdout as { columns?: number }).columns;
      const theme = ctx.style.enabled ? ansiTheme : plainTheme;
      const width = parseWidth(values.width, columns);
      for (const line of renderSnapshot(view, { width, now: Date.now(), theme })) ctx.print(line);
      return ExitCode.ok;
    }
  } else if (snapshot) {
    const runs = await host.call("runs.list", {
      limit: 500,
      ...(values.schedule === undefined ? {} : { scheduleId: values.schedule }),
    });
    if (values.json) ctx.printJson(viewOutput(runs));
    else {
      const columns = (ctx.io.stdout as { columns?: number }).columns;
      const theme = ctx.style.enabled ? ansiTheme : plainTheme;
      const lines = renderRunTable(runs, {
        width: parseWidth(values.width, columns),
        now: Date.now(),
        theme,
      });
      for (const line of runs.length === 0 ? ["no runs"] : lines) ctx.print(line);
    }
    return ExitCode.ok;
  }
  await runViewerApp({
    source: hostViewerSource(host),
    ...(runId === undefined ? {} : { runId }),
    ...(values.schedule === undefined ? {} : { schedule: values.schedule }),
    theme: ctx.style.enabled ? ansiTheme : plainTheme,
  });
  return ExitCode.ok;
}
