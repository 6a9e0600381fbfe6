import { writeFileSync } from "node:fs";
import { afterEach, describe, expect, it } from "vitest";
import { TestHost } from "./host-harness.js";

let host: TestHost;
afterEach(async () => {
  await host.cleanup();
});

/** `count` -> `add` -> done, where `add` adds `step` to count's output; `nodes` renames the second node. */
function version(step: number, second = "add"): string {
  return `import { compute, defineWorkflow } from "piw";

export default defineWorkflow({
  name: "edited",
  startAt: "count",
  nodes: {
    count: compute({ run: () => 1 }),
    ${second}: compute({ run: ({ outputs }) => outputs.count + ${step} }),
  },
  edges: { count: { to: "${second}" }, ${second}: { to: "done" } },
});
`;
}

/** A run parked after `count` finished and `add` opened: its worker was killed there. */
async function parkedAtAdd(file: string): Promise<string> {
  const runId = await host.prepare(file, null);
  const worker = host.launch(runId, { env: { PIW_WORKER_CRASH_AT: "after-advance" } });
  expect((await worker.exited).signal).toBe("SIGKILL");
  host.recordLost(worker);
  // What the host does with a lost worker's run before a person resumes it.
  const run = host.store.getRun(runId);
  if (run?.status !== "parked") {
    expect(
      host.store.parkRun(worker.fence, { code: "worker_lost", message: "lost", launchId: worker.launchId })
        .kind,
    ).toBe("applied");
  }
  return runId;
}

describe("piw resume --accept-changes, with the workflow file edited while the run was parked", () => {
  it("fails on a plain resume as before, and goes on under the edited file when the changes are accepted", async () => {
    host = new TestHost();
    const file = host.writeWorkflow("edited", version(1));
    const plain = await parkedAtAdd(file);
    const accepted = await parkedAtAdd(file);
    const before = host.store.getRun(accepted);
    writeFileSync(file, version(100));

    const refused = host.launch(plain, { resume: {} });
    expect((await refused.exited).code).not.toBeNull();
    expect(host.store.getRun(plain)).toMatchObject({ status: "failed", errorCode: "source_changed" });

    const worker = host.launch(accepted, { resume: { acceptChanges: true } });
    expect((await worker.exited).code).toBe(0);
    expect(host.store.getRun(accepted)).toMatchObject({ status: "done", outcome: "completed" });
    expect(host.store.readRunFinalOutput(accepted)).toBe(101);
    // The run follows the edited file from now on: a later resume checks against it.
    const after = host.store.getRun(accepted);
    // A compute node's code is not part of the digest; the file's sha256 is what moved.
    expect(after?.definitionDigest).toBe(before?.definitionDigest);
    expect(after?.source).toMatchObject({ kind: "file", path: file });
    expect(after?.source).not.toEqual(before?.source);
    expect(host.store.listRunSteps(accepted).map((s) => [s.path, s.visit, s.status])).toEqual([
      ["count", 1, "succeeded"],
      ["add", 1, "succeeded"],
    ]);
    expect(host.store.listRunEvents(accepted).map((e) => e.type)).toContain("run.redefined");
  });

  it("refuses changes that lose the saved position, keeps the run parked with the reason, and a resume on the restored file goes on", async () => {
    host = new TestHost();
    const file = host.writeWorkflow("edited", version(1));
    const runId = await parkedAtAdd(file);
    const before = host.store.getRun(runId);
    writeFileSync(file, version(1, "sum"));

    const worker = host.launch(runId, { resume: { acceptChanges: true } });
    expect((await worker.exited).code).toBe(0);
    const parked = host.store.getRun(runId);
    expect(parked).toMatchObject({
      status: "parked",
      recoveryReason: {
        code: "changes_refused",
        message:
          "The changed workflow cannot continue this run: the saved node add is not in the changed workflow.",
      },
    });
    expect([parked?.definitionDigest, parked?.source]).toEqual([before?.definitionDigest, before?.source]);
    expect(host.store.listRunSteps(runId).map((s) => [s.path, s.status])).toEqual([
      ["count", "succeeded"],
      ["add", "running"],
    ]);

    writeFileSync(file, version(1));
    const again = host.launch(runId, { resume: {} });
    expect((await again.exited).code).toBe(0);
    expect(host.store.getRun(runId)).toMatchObject({ status: "done", outcome: "completed" });
    expect(host.store.readRunFinalOutput(runId)).toBe(2);
  });
});
