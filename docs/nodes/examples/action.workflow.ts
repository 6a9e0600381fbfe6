import { appendFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { action, type ActionContext, defineWorkflow } from "piw";
import { z } from "zod";

type Input = { task: string };

/** An action whose side effect (a line appended to a file) runs inside a managed effect. */
export default defineWorkflow({
  name: "action",
  input: z.object({ task: z.string() }),
  startAt: "record",
  nodes: {
    record: action({
      run: ({ input, effects }: ActionContext<Input>) =>
        effects.idempotent(
          "log.append",
          { file: join(tmpdir(), "piw-action-example.log"), line: input.task },
          (request) => {
            const { file, line } = request as { file: string; line: string };
            appendFileSync(file, `${line}\n`);
            return { appended: line };
          },
        ),
      timeoutMs: 30_000,
    }),
  },
  edges: { record: { to: "done" } },
});
