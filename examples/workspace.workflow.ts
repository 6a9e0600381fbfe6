import { action, type ActionContext, defineWorkflow } from "piw";
import { z } from "zod";

type Input = { dir: string };

/**
 * Prepares a workspace through a managed effect. `compose` mounts it twice: the engine gives each
 * mount its own effect identity from the full node path, so the two never collide.
 */
export default defineWorkflow({
  name: "workspace",
  input: z.object({ dir: z.string() }),
  startAt: "prepare",
  exits: ["ready"],
  nodes: {
    prepare: action({
      run: ({ input, effects }: ActionContext<Input>) =>
        effects.idempotent("workspace.prepare", { dir: input.dir }, (request) => ({
          prepared: (request as Input).dir,
        })),
    }),
  },
  edges: { prepare: { to: "ready" } },
});
