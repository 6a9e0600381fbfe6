import { join } from "node:path";
import { connectHost } from "@piw/client";
import { isClockReason, type RunView } from "@piw/protocol";
import { recoveryWords } from "@piw/viewer";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cleanUp, makeHome, piw, repo, withoutAnsi } from "./cli-harness.js";

// docs/nodes/examples/wait.workflow.ts through the real CLI and host: the embedded runtime has no
// clock, so the page's example runs here. A client on the host's socket sees every view of the run.

const SLOW = 120_000;
const EXAMPLE = join(repo, "docs", "nodes", "examples", "wait.workflow.ts");
let home: string;
beforeAll(() => {
  home = makeHome();
});
afterAll(() => cleanUp(home));

describe("docs/nodes/examples/wait.workflow.ts", () => {
  it(
    "parks waiting until its due time, with no worker, then completes",
    async () => {
      expect((await piw(home, ["list"])).code).toBe(0);
      const client = await connectHost({ stateDir: home, client: "cli", autoStart: false });
      const views: RunView[] = [];
      const unsubscribe = await client.subscribe(undefined, (view) => views.push(view));
      try {
        const result = await piw(home, ["run", EXAMPLE, "tidy up"]);
        expect(result.stderr).toBe("");
        expect(result.code).toBe(0);
        expect(withoutAnsi(result.stdout).trimEnd().split("\n").at(-1)).toBe('output    {"done":"tidy up"}');

        const parked = views.find((v) => v.status === "parked");
        expect(parked?.currentWork).toEqual({ kind: "none" });
        const reason = parked?.recoveryReason ?? null;
        expect(reason !== null && isClockReason(reason)).toBe(true);
        if (reason === null) throw new Error("the run never parked");
        expect(recoveryWords(reason)).toMatch(/^waiting until \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC$/);
        const last = views.filter((v) => v.runId === parked?.runId).at(-1);
        expect(last).toMatchObject({ status: "done", outcome: "completed" });
        expect(last?.nodes.map((n) => [n.path, n.state])).toEqual([
          ["settle", "succeeded"],
          ["finish", "succeeded"],
        ]);
      } finally {
        await unsubscribe();
        client.close();
      }
    },
    SLOW,
  );
});
