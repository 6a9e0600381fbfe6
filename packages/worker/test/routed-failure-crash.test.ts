import { describe, expect, it } from "vitest";
import { lines } from "@piw/test-kit";
import { TestHost } from "./host-harness.js";

let host: TestHost | undefined;

/** `test` appends a line to `counter` and exits 1, which routes to `fix`; `fix` reads the failure. */
function routedWorkflow(counter: string): string {
  return `import { compute, defineWorkflow, shell } from "piw";

export default defineWorkflow({
  name: "routed",
  startAt: "test",
  nodes: {
    test: shell({ exec: ["sh", "-c", ${JSON.stringify(`echo x >> '${counter}'; echo failing >&2; exit 1`)}] }),
    fix: compute({ run: ({ failures }) => failures.test?.shell ?? null }),
  },
  edges: { test: { to: "done", onExitCode: { 1: "fix" } }, fix: { to: "done" } },
});
`;
}

describe("a worker killed at the boundary of a routed failure", () => {
  it.each([
    // The failure and the fix's start are one commit: both are there, or neither.
    [
      "after-advance",
      [
        ["test", "failed", "fix"],
        ["fix", "running", null],
      ],
    ],
    // The finish alone (the two-call path): the saved failure already carries its route.
    ["between-nodes", [["test", "failed", "fix"]]],
  ] as const)(
    "%s: keeps the route, and a relaunch runs the fix without running the test again",
    async (boundary, atDeath) => {
      host = new TestHost();
      try {
        const counter = host.path("counter");
        const runId = await host.prepare(host.writeWorkflow("routed", routedWorkflow(counter)), null);
        const env = { PIW_WORKER_CRASH_AT: boundary, PIW_WORKER_CRASH_ONCE_FILE: host.path("crashed") };
        const first = host.launch(runId, { env });
        expect((await first.exited).signal).toBe("SIGKILL");
        expect(host.store.listRunSteps(runId).map((s) => [s.path, s.status, s.nextPath])).toEqual(atDeath);
        expect(host.recordLost(first).decision).toBe("relaunch");

        const second = host.launch(runId, { env });
        expect((await second.exited).code).toBe(0);
        expect(host.store.getRun(runId)).toMatchObject({ status: "done", outcome: "completed" });
        expect(host.store.readRunFinalOutput(runId)).toEqual({ exitCode: 1, stdout: "", stderr: "failing" });
        expect(lines(counter)).toHaveLength(1);
      } finally {
        await host.cleanup();
      }
    },
  );
});
