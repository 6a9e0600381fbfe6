import { describe, expectTypeOf, it } from "vitest";
import { z } from "zod";
import {
  agent,
  compute,
  defineWorkflow,
  type NodeOutput,
  parallel,
  type ShellReport,
  shell,
} from "../src/authoring/index.js";

const review = defineWorkflow({
  name: "review",
  startAt: "read",
  nodes: { read: compute({ run: () => 1 }) },
  edges: { read: { to: "done" } },
});

describe("parallel types", () => {
  it("keys the output by branch name: every branch for all, each optional for any and atLeast", () => {
    const branches = {
      lint: shell({ exec: ["true"] }),
      verdict: agent({ prompt: "p", output: z.object({ ok: z.boolean() }) }),
      count: compute({ run: () => 3 }),
      review,
    };
    const all = parallel({ branches, join: "all" });
    expectTypeOf<NodeOutput<typeof all>>().toEqualTypeOf<{
      lint: ShellReport;
      verdict: { ok: boolean };
      count: number;
      review: unknown;
    }>();
    const any = parallel({ branches, join: "any" });
    expectTypeOf<NodeOutput<typeof any>>().toEqualTypeOf<{
      lint?: ShellReport;
      verdict?: { ok: boolean };
      count?: number;
      review?: unknown;
    }>();
    const some = parallel({ branches, join: { atLeast: 2 } });
    expectTypeOf<NodeOutput<typeof some>>().toEqualTypeOf<NodeOutput<typeof any>>();
  });

  it("types the joined output in the parallel node's route, and checks its targets", () => {
    defineWorkflow({
      name: "routed",
      startAt: "fan",
      nodes: {
        fan: parallel({
          branches: { a: compute({ run: () => 1 }), b: compute({ run: () => "x" }) },
          join: "all",
        }),
        again: compute({ run: () => 0 }),
      },
      edges: {
        fan: {
          to: ["done", "again"],
          route: (joined) => {
            expectTypeOf(joined).toEqualTypeOf<{ a: number; b: string }>();
            return joined.a > 0 ? "done" : "again";
          },
          onFailure: "again",
        },
        again: { to: "done" },
      },
    });
    defineWorkflow({
      name: "wrong",
      startAt: "fan",
      nodes: { fan: parallel({ branches: { a: compute({ run: () => 1 }) }, join: "all" }) },
      edges: {
        fan: {
          to: "done",
          // @ts-expect-error: a parallel node's failure goes to a node of its workflow
          onFailure: "nowhere",
        },
      },
    });
  });
});
