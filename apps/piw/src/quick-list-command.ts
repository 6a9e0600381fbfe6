import { quickListRuns } from "@piw/client";
import { OUTPUT_SCHEMA_VERSIONS } from "./output-schema-versions.js";
import { renderRunList } from "./render-list.js";
import { colorWanted, createStyle } from "./style.js";

/** `piw list`'s default page, the same as `listCommand` with no options (see COMMAND_TABLE.list). */
const DEFAULT_LIMIT = 50;

/**
 * Plain `piw list` (no options but `--json`) against a running host, by the quick route: no zod and
 * none of the protocol's schemas are built, the reply is checked by `quickRunSummaries`, and what it
 * prints is what `listCommand` prints. Returns false, having printed nothing, when the quick route does not
 * apply; then the full CLI runs the command as always (it starts a host, reports errors, parses the
 * reply with the protocol's schemas).
 */
export async function quickList(
  stateDir: string,
  out: NodeJS.WriteStream,
  env: NodeJS.ProcessEnv,
  json: boolean,
): Promise<boolean> {
  const runs = await quickListRuns(stateDir, { limit: DEFAULT_LIMIT });
  if (runs === undefined) return false;
  if (json) {
    // As listOutput and CliContext.printJson print it.
    out.write(`${JSON.stringify({ schema: OUTPUT_SCHEMA_VERSIONS.list, runs }, null, 2)}\n`);
    return true;
  }
  const style = createStyle(colorWanted(out, env));
  out.write(`${renderRunList(runs, style).join("\n")}\n`);
  return true;
}
