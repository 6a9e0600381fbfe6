import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { waitFor } from "@piw/test-kit";
import { cleanUp, collect, example, makeHome, piw, spawnPiw, withoutAnsi } from "./cli-harness.js";

// examples/poll.workflow.ts end to end with `piw run`: the run parks on its wait between checks (no
// process), the host's clock wakes it, and `piw run` follows it to the end.

const SLOW = 120_000;
let home: string;
beforeAll(() => {
  home = makeHome();
});
afterAll(() => cleanUp(home));

describe("examples/poll.workflow.ts", () => {
  it(
    "waits and checks again until the file appears, then ends at found",
    async () => {
      const flag = join(home, "flag");
      const input = JSON.stringify({ path: flag, everyMs: 300, tries: 50 });
      const follower = collect(spawnPiw(home, ["run", example("poll"), "--input-json", input]));
      // Appear only after the run has checked, waited and checked again at least once.
      await waitFor("a second check", () => /check +shell +#2/.test(withoutAnsi(follower.stdout())), 60_000);
      expect(existsSync(flag)).toBe(false);
      writeFileSync(flag, "ready");
      const result = await follower;
      expect(result.stderr).toBe("");
      expect(result.code).toBe(0);
      const out = withoutAnsi(result.stdout);
      expect(out).toMatch(/pause +wait +#1/);
      const lines = out.trimEnd().split("\n");
      expect(lines).toContainEqual(expect.stringMatching(/^✓ poll completed/));
      expect(lines.at(-1)).toBe("output    found");
    },
    SLOW,
  );

  it(
    "gives up after its tries, parked on the clock between them",
    async () => {
      const input = JSON.stringify({ path: join(home, "never"), everyMs: 100, tries: 3 });
      const result = await piw(home, ["run", example("poll"), "--input-json", input]);
      expect(result.code).toBe(0);
      const out = withoutAnsi(result.stdout);
      expect(out).toMatch(/check +shell +#3/);
      expect(out).not.toMatch(/check +shell +#4/);
      expect(out).toMatch(/pause +wait +#2/);
    },
    SLOW,
  );
});
