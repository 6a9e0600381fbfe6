import { describe, expectTypeOf, it } from "vitest";
import { z } from "zod";
import { agent, compute, defineWorkflow, map, type NodeOutput } from "../src/authoring/index.js";

const review = defineWorkflow({
  name: "review",
  startAt: "read",
  nodes: { read: compute({ run: () => 1 }) },
  edges: { read: { to: "done" } },
});

describe("map types", () => {
  it("types the output as the branch's output per item: nullable entries for any and atLeast", () => {
    const verdict = agent({ prompt: "p", output: z.object({ ok: z.boolean() }) });
    const all = map({ over: () => [1, 2], branch: verdict });
    expectTypeOf<NodeOutput<typeof all>>().toEqualTypeOf<{ ok: boolean }[]>();
    const explicit = map({ over: () => [1], branch: verdict, join: "all" });
    expectTypeOf<NodeOutput<typeof explicit>>().toEqualTypeOf<{ ok: boolean }[]>();
    const any = map({ over: () => [1], branch: verdict, join: "any" });
    expectTypeOf<NodeOutput<typeof any>>().toEqualTypeOf<({ ok: boolean } | null)[]>();
    const some = map({ over: () => [1], branch: compute({ run: () => "x" }), join: { atLeast: 1 } });
    expectTypeOf<NodeOutput<typeof some>>().toEqualTypeOf<(string | null)[]>();
    const workflow = map({ over: () => [1], branch: review });
    expectTypeOf<NodeOutput<typeof workflow>>().toEqualTypeOf<unknown[]>();
  });

  it("types `over`'s scope by its annotation and the joined output in the map node's route", () => {
    defineWorkflow({
      name: "routed",
      input: z.object({ files: z.array(z.string()) }),
      startAt: "fan",
      nodes: {
        fan: map({
          over: ({ input }: { input: { files: string[] } }) => input.files,
          branch: compute({ run: () => 1 }),
        }),
        again: compute({ run: () => 0 }),
      },
      edges: {
        fan: {
          to: ["done", "again"],
          route: (joined) => {
            expectTypeOf(joined).toEqualTypeOf<number[]>();
            return joined.length > 1 ? "done" : "again";
          },
        },
        again: { to: "done" },
      },
    });
  });
});
