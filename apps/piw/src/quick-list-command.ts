import { quickListRuns } from "@piw/client";
import { renderRunList } from "./render-list.js";
import { colorWanted, createStyle } from "./style.js";

/** `piw list`'s default page, the same as `listCommand` with no options (see COMMAND_TABLE.list). */
const DEFAULT_LIMIT = 50;

/**
 * Plain `piw list` (no options) against a running host, by the quick route: no zod and none of the
 * protocol's schemas are built, the reply is checked by `quickRunSummaries`, and the lines are the
 * ones `listCommand` prints. Returns false, having printed nothing, when the quick route does not
 * apply; then the full CLI runs the command as always (it starts a host, reports errors, parses the
 * reply with the protocol's schemas).
 */
export async function quickList(
  stateDir: string,
  out: NodeJS.WriteStream,
  env: NodeJS.ProcessEnv,
): Promise<boolean> {
  const runs = await quickListRuns(stateDir, { limit: DEFAULT_LIMIT });
  if (runs === undefined) return false;
  const style = createStyle(colorWanted(out, env));
  out.write(`${renderRunList(runs, style).join("\n")}\n`);
  return true;
}
