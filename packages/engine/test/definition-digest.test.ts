import { describe, expect, it } from "vitest";
import { z } from "zod";
import { agent, compileWorkflow, compute, defineWorkflow, shell } from "../src/index.js";

interface Variant {
  loop?: boolean;
  schema?: z.ZodType;
  prompt?: string;
  timeoutMs?: number;
  argv?: string[];
}

/** Builds a fresh definition each time, as loading the same source twice would. */
function build(variant: Variant = {}) {
  return defineWorkflow({
    name: "digest",
    input: z.object({ task: z.string() }),
    startAt: "a",
    nodes: {
      a: agent({
        prompt: variant.prompt ?? "Do the task",
        output: variant.schema ?? z.object({ ok: z.boolean() }),
        timeoutMs: variant.timeoutMs,
      }),
      b: shell({ exec: variant.argv ?? ["npm", "test"] }),
      c: compute({ run: () => 1 }),
    },
    edges: {
      a: { to: "b" },
      b: { to: "c" },
      c: variant.loop ? { to: ["b", "done"], route: (): "done" => "done" } : { to: "done" },
    },
  });
}

describe("definition digest", () => {
  it("is the same for the same source, compiled twice", () => {
    const first = compileWorkflow(build());
    const second = compileWorkflow(build());
    expect(first.digest).toMatch(/^[0-9a-f]{64}$/);
    expect(second.digest).toBe(first.digest);
    expect(compileWorkflow(build()).digest).toBe(first.digest);
  });

  it("changes with the graph, the schemas and the node settings", () => {
    const base = compileWorkflow(build()).digest;
    const digests = [
      compileWorkflow(build({ loop: true })).digest,
      compileWorkflow(build({ schema: z.object({ ok: z.string() }) })).digest,
      compileWorkflow(build({ prompt: "Do it differently" })).digest,
      compileWorkflow(build({ timeoutMs: 5000 })).digest,
      compileWorkflow(build({ argv: ["npm", "run", "check"] })).digest,
    ];
    expect(digests).not.toContain(base);
    expect(new Set(digests).size).toBe(digests.length);
  });
});
