import { randomUUID } from "node:crypto";
import { BUILTIN_SOURCE_DIGESTS, BUILTIN_WORKFLOWS } from "@piw/builtins";
import { builtinRevision, compileWorkflow } from "@piw/engine";
import type { JsonValue } from "@piw/protocol";
import { afterEach, describe, expect, it } from "vitest";
import { expectSaved, TestHost } from "./host-harness.js";

let host: TestHost;
afterEach(async () => {
  await host.cleanup();
});

const sanityCheck = BUILTIN_WORKFLOWS.find((definition) => definition.name === "sanity-check");
if (sanityCheck === undefined) throw new Error("sanity-check is not a built-in");
const OLD_REVISION = "0123456789abcdef";

/** A sanity-check run saved under an older revision of the built-in, parked as a lost worker leaves it. */
function parkedUnderOldRevision(): string {
  const compiled = compileWorkflow(sanityCheck as NonNullable<typeof sanityCheck>);
  const runId = `sanity-check-${randomUUID().slice(0, 8)}`;
  expectSaved(
    host.store.reservePreparedRun({
      runId,
      workflowName: "sanity-check",
      source: { kind: "builtin", id: "sanity-check", revision: OLD_REVISION },
      definitionDigest: compiled.digest,
      manifest: compiled.manifest as unknown as JsonValue,
      input: { focus: "x" },
      origin: { kind: "cli" },
    }),
  );
  const { command } = expectSaved(
    host.store.claimRun({ runId, claimToken: `claim-${randomUUID()}`, leaseMs: 60_000 }),
  );
  const fence = { runId, generation: command.generation, claimToken: command.claimToken };
  const launchId = `launch-${randomUUID()}`;
  expectSaved(host.store.recordWorkerLaunch(fence, { launchId, commandType: command.type, pid: null }));
  expectSaved(host.store.markRunning(fence));
  expectSaved(host.store.parkRun(fence, { code: "worker_lost", message: "lost", launchId }));
  return runId;
}

describe("resuming a run of a built-in whose revision changed", () => {
  it("fails with source_changed on a plain resume, and goes on under the new revision when the changes are accepted", async () => {
    host = new TestHost();
    const plain = parkedUnderOldRevision();
    const refused = host.launch(plain, { resume: {} });
    expect((await refused.exited).code).toBe(1);
    expect(host.store.getRun(plain)).toMatchObject({ status: "failed", errorCode: "source_changed" });
    expect(host.store.readRunError(plain)).toEqual({
      code: "source_changed",
      message: "Built-in workflow sanity-check changed since the run was prepared.",
    });

    const accepted = parkedUnderOldRevision();
    // Stopped at its first durable step: what matters is the source it went on under.
    const worker = host.launch(accepted, {
      resume: { acceptChanges: true },
      env: { PIW_WORKER_CRASH_AT: "after-advance" },
    });
    expect((await worker.exited).signal).toBe("SIGKILL");
    expect(host.store.getRun(accepted)?.source).toEqual({
      kind: "builtin",
      id: "sanity-check",
      revision: builtinRevision(
        sanityCheck as NonNullable<typeof sanityCheck>,
        BUILTIN_SOURCE_DIGESTS["sanity-check"],
      ),
    });
    expect(host.store.listRunEvents(accepted).map((e) => e.type)).toContain("run.redefined");
  });
});
