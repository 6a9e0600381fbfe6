import { mkdtempSync, realpathSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { finished, type Sandbox, sandbox, start, TestClient, writeWorkflow } from "./host-fixture.js";
import { removeTree } from "@piw/test-kit";

let box: Sandbox;
let project: string;
let stop: (() => Promise<void>) | undefined;
afterEach(async () => {
  await stop?.();
  box.cleanup();
  removeTree(project);
});

const PWD_FLOW = `import { defineWorkflow, shell } from "piw";
export default defineWorkflow({
  name: "where",
  startAt: "pwd",
  nodes: { pwd: shell({ exec: ["pwd"] }) },
  edges: { pwd: { to: "done" } },
});
`;

describe("a run's working directory", () => {
  it("is where its shell steps run", async () => {
    box = sandbox();
    project = realpathSync(mkdtempSync(join(tmpdir(), "piw-project-")));
    const host = await start(box);
    stop = () => host.stop();
    const flow = await writeWorkflow(box, "where", PWD_FLOW);
    const client = await TestClient.connect(host.socketPath);
    const reserved = await client.call("runs.reserve", { ...flow.reserve(null), workingDir: project });
    if (reserved.kind !== "applied") throw new Error(JSON.stringify(reserved));
    const { runId } = reserved.value;
    await finished(client, runId, 30_000);
    const view = await client.call("runs.get", { runId });
    expect({ status: view?.status, outcome: view?.outcome, error: view?.error }).toEqual({
      status: "done",
      outcome: "completed",
      error: null,
    });
    expect(host.reader.readRunFinalOutput(runId)).toEqual({ exitCode: 0, stdout: project, stderr: "" });
    client.close();
  });
});
