import { compute, defineWorkflow, shell } from "piw";

/** How many times the fix step may try before the run gives up. */
const MAX_FIX_ROUNDS = 3;

// The project under test: a one-function module with a bug and a test of it, written to a fresh
// temporary folder so that the run (and CI) never touches anything else.
const PREPARE = `dir=$(mktemp -d)
printf 'export const add = (a, b) => a - b;\\n' > "$dir/add.mjs"
cat > "$dir/add.test.mjs" <<'EOF'
import assert from "node:assert/strict";
import { test } from "node:test";
import { add } from "./add.mjs";
test("add sums", () => assert.equal(add(2, 3), 5));
EOF
echo "$dir"`;

/**
 * Runs a project's tests; a real test failure (exit code 1) goes to a fix step, which repairs the code
 * and sends the run back to the tests. Any other failure of the test command ends the run.
 */
export default defineWorkflow({
  name: "flaky-tests",
  title: "Test, fix, test again",
  startAt: "prepare",
  nodes: {
    prepare: shell({ exec: { shell: PREPARE }, parse: ({ stdout }) => ({ dir: stdout }) }),
    test: shell({
      exec: ({ outputs }) => [
        process.execPath,
        "--test",
        `${(outputs.prepare as { dir: string }).dir}/add.test.mjs`,
      ],
      timeoutMs: 60_000,
      // A test run that hangs is flaky, not failed: it gets two more attempts of the same visit, with a
      // durable pause between them (the run parks with no process; the host wakes it). A real failure
      // (exit code 1) is not retried: it takes the route below to the fix step.
      retry: {
        attempts: 3,
        backoff: { initialMs: 1_000, factor: 2, maxMs: 10_000, jitter: 0.2 },
        retryOn: { timedOut: true },
      },
    }),
    fix: shell({
      exec: ({ outputs }) => [
        "sed",
        "-i.orig",
        "s/a - b/a + b/",
        `${(outputs.prepare as { dir: string }).dir}/add.mjs`,
      ],
      // The failure that routed here: its exit code and the tail of what the tests printed.
      parse: (_report, { failures, node }) => ({
        round: node.visit,
        fixedAfter: failures.test?.shell?.exitCode ?? null,
        sawFailure: failures.test?.shell?.stdout.includes("not ok") ?? false,
      }),
    }),
    report: compute({
      run: ({ outputs }) => ({
        passed: true,
        fixRounds: (outputs.fix as { round: number } | undefined)?.round ?? 0,
        lastFix: outputs.fix ?? null,
      }),
    }),
    giveUp: compute({ run: ({ failures }) => ({ passed: false, failure: failures.test ?? null }) }),
  },
  edges: {
    prepare: { to: "test" },
    test: { to: "report", onExitCode: { 1: "fix" } },
    fix: {
      to: ["test", "giveUp"],
      route: (fixed) => (fixed.round < MAX_FIX_ROUNDS ? "test" : "giveUp"),
      labels: { test: "test again", giveUp: "too many rounds" },
    },
    report: { to: "done" },
    giveUp: { to: "done" },
  },
});
