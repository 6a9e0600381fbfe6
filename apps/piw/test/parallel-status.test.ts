import { join } from "node:path";
import { HostConnection } from "@piw/client";
import type { GraphManifest, JsonValue, RunView } from "@piw/protocol";
import { afterEach, describe, expect, it } from "vitest";
import { cleanUp, hostCommand, makeHome, piw, workerCommand } from "./cli-harness.js";
import { removeTree } from "@piw/test-kit";

// `piw status` of a run whose graph has a parallel node, through a real host: the manifest the host
// saved comes back in the view, and the CLI lists each branch's steps under the parallel node.

/** prepare → checks (parallel: lint [run]; test [unit → report]) → ship → done. */
const manifest: GraphManifest = {
  version: 1,
  workflow: "checks",
  startPath: "prepare",
  exits: ["done"],
  maxSteps: 20,
  nodes: [
    { path: "prepare", name: "prepare", scope: "", kind: "compute", title: "prepare" },
    { path: "checks", name: "checks", scope: "", kind: "parallel", title: "checks" },
    { path: "checks/lint/run", name: "run", scope: "checks/lint", kind: "shell", title: "run" },
    { path: "checks/test/unit", name: "unit", scope: "checks/test", kind: "shell", title: "unit" },
    { path: "checks/test/report", name: "report", scope: "checks/test", kind: "compute", title: "report" },
    { path: "ship", name: "ship", scope: "", kind: "shell", title: "ship" },
  ],
  mounts: [],
  edges: [
    { from: "prepare", to: { kind: "node", path: "checks" } },
    { from: "checks", to: { kind: "node", path: "ship" } },
    { from: "checks/lint/run", to: { kind: "join", path: "checks" } },
    { from: "checks/test/unit", to: { kind: "node", path: "checks/test/report" } },
    { from: "checks/test/report", to: { kind: "join", path: "checks" } },
    { from: "ship", to: { kind: "exit", exit: "done" } },
  ],
  forks: [
    {
      path: "checks",
      join: { kind: "any" },
      concurrency: null,
      branches: [
        { name: "lint", title: "lint", startPath: "checks/lint/run" },
        { name: "test", title: "test", startPath: "checks/test/unit" },
      ],
    },
  ],
};

let home: string | undefined;
let connection: HostConnection | undefined;
afterEach(async () => {
  connection?.close();
  connection = undefined;
  if (home) {
    await cleanUp(home);
    removeTree(home);
  }
  home = undefined;
});

describe("piw status of a run with a parallel node", () => {
  it("lists the branches' steps under the parallel node, and --json keeps the manifest's forks", async () => {
    home = makeHome();
    process.env.PIW_WORKER_COMMAND = JSON.stringify(workerCommand);
    connection = await HostConnection.open({
      stateDir: home,
      client: "viewer",
      hostCommand,
      timeoutMs: 60_000,
    });
    // The source names no file, so the run never gets past loading it: only its saved graph matters.
    const reply = await connection.call("runs.reserve", {
      workflowName: "checks",
      source: { kind: "file", path: join(home, "checks.workflow.ts"), sha256: "0".repeat(64) },
      definitionDigest: "0".repeat(64),
      manifest: manifest as unknown as JsonValue,
      input: null,
      origin: { kind: "cli" },
      workingDir: home,
    });
    if (reply.kind !== "applied") throw new Error(`reserve: ${JSON.stringify(reply).slice(0, 300)}`);
    const runId = reply.value.runId;

    const text = await piw(home, ["status", runId]);
    expect(text.code).toBe(0);
    const nodes = text.stdout.slice(text.stdout.indexOf("\nnodes\n") + "\nnodes\n".length).split("\n");
    const rows = nodes.filter((line) => line.trim() !== "").map((line) => line.replace(/[✓✗▶·⏱■⏸] /, "• "));
    // Each row's indentation and name, without what follows it.
    expect(rows.map((line) => /^\s*(?:• |branch )\S+/.exec(line)?.[0])).toEqual([
      "  • prepare",
      "  • checks",
      "    branch lint",
      "      • checks/lint/run",
      "    branch test",
      "      • checks/test/unit",
      "      • checks/test/report",
      "  • ship",
    ]);
    expect(rows[1]).toContain("join: any of 2 branches");

    const json = await piw(home, ["status", runId, "--json"]);
    const view = JSON.parse(json.stdout) as RunView;
    expect(view.manifest.forks?.[0]?.branches.map((branch) => branch.name)).toEqual(["lint", "test"]);
    expect(view.manifest.edges.filter((edge) => edge.to.kind === "join")).toHaveLength(2);
  }, 120_000);
});
