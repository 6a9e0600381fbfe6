import { describe, expectTypeOf, it } from "vitest";
import {
  compute,
  decision,
  decisionEdge,
  defineWorkflow,
  type NodeContext,
  type NodeFailureInfo,
  type ShellReport,
  shell,
} from "../src/authoring/index.js";

describe("outcome route types", () => {
  it("accepts failure, timeout and exit-code routes to nodes", () => {
    defineWorkflow({
      name: "ok",
      startAt: "test",
      nodes: {
        test: shell({ exec: ["npm", "test"], okExitCodes: [0, 5] }),
        fix: compute({ run: ({ failures }: NodeContext) => failures.test?.code }),
        pick: decision({ choices: ["a", "b"], decide: () => "a" }),
      },
      edges: {
        test: { to: "pick", onFailure: "fix", onTimeout: "fix", onExitCode: { 1: "fix", 2: "pick" } },
        fix: { to: "done", onFailure: "test" },
        pick: decisionEdge({ a: "done", b: "test" }, { onFailure: "fix" }),
      },
    });
  });

  it("rejects an unknown target, an exit as target and exit codes off a shell node", () => {
    defineWorkflow({
      name: "bad",
      startAt: "test",
      nodes: { test: shell({ exec: ["npm", "test"] }), fix: compute({ run: () => 1 }) },
      edges: {
        // @ts-expect-error a misspelled failure target
        test: { to: "done", onFailure: "fxi" },
        fix: { to: "done" },
      },
    });
    defineWorkflow({
      name: "bad",
      startAt: "test",
      nodes: { test: shell({ exec: ["npm", "test"] }), fix: compute({ run: () => 1 }) },
      edges: {
        // @ts-expect-error a failure does not end the run at an exit
        test: { to: "fix", onTimeout: "done" },
        fix: { to: "done" },
      },
    });
    defineWorkflow({
      name: "bad",
      startAt: "test",
      nodes: { test: shell({ exec: ["npm", "test"] }), fix: compute({ run: () => 1 }) },
      edges: {
        test: { to: "fix" },
        // @ts-expect-error only a shell node routes by exit code
        fix: { to: "done", onExitCode: { 1: "test" } },
      },
    });
    defineWorkflow({
      name: "bad",
      startAt: "pick",
      nodes: { pick: decision({ choices: ["a"], decide: () => "a" }), fix: compute({ run: () => 1 }) },
      edges: {
        // @ts-expect-error a decision's failure route names a node too
        pick: decisionEdge({ a: "fix" }, { onFailure: "nowhere" }),
        fix: { to: "done" },
      },
    });
  });

  it("gives a shell node the report as its output and to parse", () => {
    const plain = shell({ exec: ["ls"] });
    expectTypeOf(plain).toMatchTypeOf<{ parse?(report: ShellReport, ctx: NodeContext): ShellReport }>();
    shell({
      exec: ["ls"],
      parse: (report) => {
        expectTypeOf(report).toEqualTypeOf<ShellReport>();
        return report.exitCode;
      },
    });
    expectTypeOf<NodeContext["failures"]>().toEqualTypeOf<Record<string, NodeFailureInfo>>();
    expectTypeOf<NodeFailureInfo["shell"]>().toEqualTypeOf<ShellReport | undefined>();
  });
});
