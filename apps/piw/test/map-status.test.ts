import { writeFileSync } from "node:fs";
import { join } from "node:path";
import type { RunView } from "@piw/protocol";
import { afterEach, describe, expect, it } from "vitest";
import { cleanUp, makeHome, makeProject, piw, repo, runIdIn } from "./cli-harness.js";
import { removeTree } from "@piw/test-kit";

// docs/nodes/examples/map.workflow.ts from a shell, through a real host and worker: `piw status`
// lists each item's branch under the map node, labelled by index, with the steps it ran.

/** Four items, one at a time: item 0's command waits for \`release\` in the run's folder. */
const GATED_MAP = `import { defineWorkflow, map, shell } from "piw";

export default defineWorkflow({
  name: "gated",
  startAt: "fan",
  nodes: {
    fan: map({
      over: () => [0, 1, 2, 3],
      branch: shell({
        exec: ({ input }) => ["sh", "-c", input === 0 ? "until [ -e release ]; do sleep 0.05; done" : "true"],
        timeoutMs: 60_000,
      }),
      concurrency: 1,
    }),
  },
  edges: { fan: { to: "done" } },
});
`;

let home: string | undefined;
let project: string | undefined;
afterEach(async () => {
  if (home) {
    await cleanUp(home);
    removeTree(home);
  }
  if (project) removeTree(project);
  home = undefined;
  project = undefined;
});

describe("piw status of a run with a map node", () => {
  it("groups each item's steps under its branch, words[0] to words[2]", async () => {
    home = makeHome();
    const file = join(repo, "docs/nodes/examples/map.workflow.ts");
    const ran = await piw(home, ["run", file, "map every word"]);
    expect(ran.code, ran.stderr).toBe(0);
    const runId = runIdIn(ran.stdout);
    const status = await piw(home, ["status", runId]);
    expect(status.code, status.stderr).toBe(0);
    const lines = status.stdout.split("\n");
    const at = (text: string) => lines.findIndex((line) => line.includes(text));
    for (const i of [0, 1, 2]) {
      const branch = at(`branch words[${i}]`);
      expect(branch, status.stdout).toBeGreaterThan(at("words "));
      expect(lines[branch]).toContain("succeeded");
      expect(lines[branch + 1]).toContain(`words/${i}/letters`);
      expect(lines[branch + 2]).toContain(`words/${i}/describe`);
    }
    expect(status.stdout).not.toContain("words/each");
    const json = JSON.parse((await piw(home, ["status", runId, "--json"])).stdout);
    expect(json.output).toEqual({ kind: "json", value: "every (word 2 of 3)" });
  }, 120_000);

  it("lists the items not started yet as pending branches while the first one runs", async () => {
    home = makeHome();
    const dir = makeProject();
    project = dir;
    writeFileSync(join(dir, ".pi", "workflows", "gated.workflow.ts"), GATED_MAP);
    const started = await piw(home, ["run", "gated", "--detach"], { cwd: dir });
    expect(started.code, started.stderr).toBe(0);
    const runId = started.stdout.trim();
    const status = async (accept: (view: RunView) => boolean): Promise<RunView> => {
      for (let i = 0; i < 300; i += 1) {
        const view = JSON.parse((await piw(home as string, ["status", runId, "--json"])).stdout) as RunView;
        if (accept(view)) return view;
        await new Promise((r) => setTimeout(r, 200));
      }
      throw new Error(`run ${runId} never got there`);
    };
    await status((v) => v.nodes.some((n) => n.path === "fan/0/fan" && n.state === "running"));
    const lines = (await piw(home, ["status", runId])).stdout.split("\n");
    const at = (text: string) => lines.findIndex((line) => line.includes(text));
    expect(lines[at("branch fan[0]")]).toContain("running");
    for (const i of [1, 2, 3]) {
      expect(lines[at(`branch fan[${i}]`)], lines.join("\n")).toContain("pending");
      expect(lines[at(`branch fan[${i}]`) + 1]).toContain(`fan/${i}/fan`);
    }
    writeFileSync(join(dir, "release"), "");
    const done = await status((v) => v.status === "done" && v.currentWork.kind === "none");
    expect(done.nodes.map((n) => [n.path, n.state])).toEqual([
      ["fan", "succeeded"],
      ...[0, 1, 2, 3].map((i) => [`fan/${i}/fan`, "succeeded"]),
    ]);
  }, 120_000);
});
