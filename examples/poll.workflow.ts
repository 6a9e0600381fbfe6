import { decision, decisionEdge, defineWorkflow, type NodeContext, shell, wait } from "piw";
import { z } from "zod";

const Input = z.object({
  /** The file to wait for, e.g. a build artifact or a flag another job writes. */
  path: z.string().min(1),
  /** How long to wait between two checks. */
  everyMs: z.number().int().min(0).default(30_000),
  /** How many checks in all before giving up. */
  tries: z.number().int().min(1).max(100).default(10),
});
type Input = z.output<typeof Input>;

/**
 * Check, and if it is not there yet, wait and check again, at most `tries` times. Between two checks
 * the run is parked with no process at all; the host wakes it when the wait is over, even after a
 * restart.
 */
export default defineWorkflow({
  name: "poll",
  title: "Wait for a file",
  input: Input,
  exits: ["found", "gave_up"],
  startAt: "check",
  nodes: {
    check: shell({
      exec: ({ input }: NodeContext<Input>) => [
        "sh",
        "-c",
        'if test -e "$1"; then echo found; else echo missing; fi',
        "poll",
        input.path,
      ],
      parse: ({ stdout }) => stdout.trim() === "found",
      timeoutMs: 10_000,
    }),
    next: decision({
      choices: ["found", "again", "gave_up"],
      decide: ({ input, outputs, node }: NodeContext<Input>) => {
        if (outputs.check === true) return "found";
        return node.visit >= input.tries ? "gave_up" : "again";
      },
    }),
    pause: wait({ until: ({ input }: NodeContext<Input>) => new Date(Date.now() + input.everyMs) }),
  },
  edges: {
    check: { to: "next" },
    next: decisionEdge({ found: "found", again: "pause", gave_up: "gave_up" }),
    pause: { to: "check" },
  },
});
