import { HostUnavailable } from "@piw/client";
import type { CliContext } from "../cli-context.js";
import { usageError } from "../cli-error.js";
import { ExitCode } from "../exit-codes.js";
import { hostStatusOutput } from "../output-schemas.js";
import { COMMAND_TABLE } from "../command-table.js";
import { parseCommandLine } from "../parse-command-line.js";
import { renderHostStatus } from "../render-list.js";
import { COMMAND_USAGE } from "../usage.js";

const STOP_WAIT_MS = 5_000;

/** `piw host status|stop`: these never start a host. */
export async function hostCommand(ctx: CliContext, args: string[]): Promise<ExitCode> {
  const { values, positionals } = parseCommandLine("host", args, COMMAND_TABLE.host.options);
  const [action, ...extra] = positionals;
  if (values.help || action === undefined) {
    ctx.print(COMMAND_USAGE.host);
    return action === undefined && !values.help ? ExitCode.usage : ExitCode.ok;
  }
  if (extra.length > 0) throw usageError(`unexpected argument ${JSON.stringify(extra[0])}`, "host");
  switch (action) {
    case "status":
      return hostStatus(ctx, values.json === true);
    case "stop":
      return hostStop(ctx);
    default:
      throw usageError(`unknown host command ${JSON.stringify(action)}; use status or stop`, "host");
  }
}

async function hostStatus(ctx: CliContext, json: boolean): Promise<ExitCode> {
  const client = await ctx.runningHost();
  if (client === undefined) {
    if (json) ctx.printJson(hostStatusOutput({ running: false, stateDir: ctx.stateDir }));
    else ctx.print(`host      not running (state ${ctx.stateDir})`);
    return ExitCode.hostUnavailable;
  }
  try {
    const status = await client.call("host.status");
    if (json) ctx.printJson(hostStatusOutput({ running: true, status }));
    else for (const line of renderHostStatus(status, ctx.style)) ctx.print(line);
    return ExitCode.ok;
  } finally {
    client.close();
  }
}

async function hostStop(ctx: CliContext): Promise<ExitCode> {
  const client = await ctx.runningHost();
  if (client === undefined) {
    ctx.print("no host is running");
    return ExitCode.ok;
  }
  const pid = client.hello.hostPid;
  try {
    await client.call("host.stop");
  } catch (error) {
    // A host that hangs up before it replies is stopping all the same.
    if (!(error instanceof HostUnavailable)) throw error;
  } finally {
    client.close();
  }
  if (await processEnds(pid, STOP_WAIT_MS)) ctx.print(`host stopped (pid ${pid})`);
  else ctx.print(`asked the host (pid ${pid}) to stop; it is still shutting down`);
  return ExitCode.ok;
}

async function processEnds(pid: number, withinMs: number): Promise<boolean> {
  const deadline = Date.now() + withinMs;
  for (;;) {
    try {
      process.kill(pid, 0);
    } catch (error) {
      // EPERM: alive but not ours to signal, which a host of this user never is.
      return (error as NodeJS.ErrnoException).code === "ESRCH";
    }
    if (Date.now() >= deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
