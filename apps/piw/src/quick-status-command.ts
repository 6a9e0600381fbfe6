import { quickGetRun } from "@piw/client";
import { renderRunStatus } from "./render-run.js";
import { colorWanted, createStyle } from "./style.js";

/**
 * Plain `piw status <runId>` (no options) against a running host, by the quick route: no zod and none
 * of the protocol's schemas are built, the reply is checked by `quickRunView`, and what it prints is
 * what `statusCommand` prints. Returns false, having printed nothing, when the quick route does not
 * apply; then the full CLI runs the command as always (it starts a host, reports a missing run or a
 * malformed ID with its typed error, parses the reply with the protocol's schemas). A run with agent
 * steps takes the full route too: its status ends with their costs, read from the run's history.
 */
export async function quickStatus(
  stateDir: string,
  out: NodeJS.WriteStream,
  env: NodeJS.ProcessEnv,
  runId: string,
): Promise<boolean> {
  const view = await quickGetRun(stateDir, runId);
  if (view === undefined || view.nodes.some((node) => node.kind === "agent")) return false;
  const style = createStyle(colorWanted(out, env));
  out.write(`${renderRunStatus(view, style).join("\n")}\n`);
  return true;
}
