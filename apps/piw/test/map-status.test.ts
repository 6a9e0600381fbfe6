import { rmSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { cleanUp, makeHome, piw, repo, runIdIn } from "./cli-harness.js";

// docs/nodes/examples/map.workflow.ts from a shell, through a real host and worker: `piw status`
// lists each item's branch under the map node, labelled by index, with the steps it ran.

let home: string | undefined;
afterEach(async () => {
  if (home) {
    await cleanUp(home);
    rmSync(home, { recursive: true, force: true });
  }
  home = undefined;
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
});
