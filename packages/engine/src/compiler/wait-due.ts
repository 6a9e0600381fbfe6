import { DAY_MS } from "@piw/protocol";
import type { CompiledWaitNode, NodeContext } from "./compiled-workflow.js";

/** The longest a wait node may wait by `ms` (366 days); a later time belongs to `until`. */
const MAX_WAIT_MS = 366 * DAY_MS;

/** A wait node's `ms` or `until`, exactly one of them; undefined (with a problem) otherwise. */
export function compileWaitDue(
  ms: unknown,
  until: unknown,
  problem: (message: string) => void,
): CompiledWaitNode["due"] | undefined {
  if ((ms === undefined) === (until === undefined)) {
    problem("a wait node takes exactly one of ms (a length) and until (a function of the node context)");
    return undefined;
  }
  if (until !== undefined) {
    if (typeof until === "function") return { kind: "until", until: until as (ctx: NodeContext) => unknown };
    problem("until must be a function of the node context that returns a Date");
    return undefined;
  }
  if (typeof ms === "number" && Number.isInteger(ms) && ms >= 0 && ms <= MAX_WAIT_MS)
    return { kind: "ms", ms };
  problem(`ms must be an integer from 0 to ${MAX_WAIT_MS}`);
  return undefined;
}
