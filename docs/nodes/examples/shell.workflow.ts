import { compute, defineWorkflow, type NodeContext, shell } from "piw";
import { z } from "zod";

type Input = { task: string };

/** Shell nodes: an argv command, a shell line with its own env, and one with its own cwd. */
export default defineWorkflow({
  name: "shell",
  input: z.object({ task: z.string() }),
  startAt: "shout",
  nodes: {
    shout: shell({
      exec: ({ input }: NodeContext<Input>) => ["printf", "%s", input.task],
      parse: ({ stdout }) => stdout.toUpperCase(),
      timeoutMs: 10_000,
    }),
    words: shell({
      exec: { shell: 'printf "%s\\n" "$GREETING" | wc -w' },
      env: { GREETING: "hello from a shell node" },
      parse: ({ stdout }) => Number(stdout.trim()),
    }),
    where: shell({ exec: ["pwd"], cwd: "/", parse: ({ stdout }) => stdout }),
    report: compute({
      run: ({ outputs }) => ({ shout: outputs.shout, words: outputs.words, where: outputs.where }),
    }),
  },
  edges: {
    shout: { to: "words" },
    words: { to: "where" },
    where: { to: "report" },
    report: { to: "done" },
  },
});
