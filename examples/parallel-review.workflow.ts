import {
  agent,
  compute,
  decision,
  decisionEdge,
  defineWorkflow,
  type NodeContext,
  parallel,
  shell,
} from "piw";
import { z } from "zod";

type Input = { task: string };

/** Every JavaScript file of the project outside node_modules, checked with `node --check`. */
const LINT = `find . -path ./node_modules -prune -o -path ./.git -prune -o \\( -name '*.js' -o -name '*.mjs' \\) -print |
sort | while read -r file; do "$1" --check "$file" >/dev/null 2>&1 || echo "$file"; done`;

const finding = z.object({ file: z.string(), note: z.string() });

/**
 * A pre-merge review of the project in the run's folder: lint, tests and a reviewer run side by side,
 * their join says whether the change is green, and a decision on the joined verdict takes the run to
 * `ship` or to a `fix` report that lists what to change. The reviewer is a fresh, read-only Pi session
 * of its own (`session: "isolated"`), so it runs beside the commands, from a shell or in Pi.
 * Run it with `piw run examples/parallel-review.workflow.ts "the sum module"`.
 */
export default defineWorkflow({
  name: "parallel-review",
  title: "Lint, test and review at once",
  input: z.object({ task: z.string().min(1) }),
  startAt: "checks",
  nodes: {
    checks: parallel({
      title: "Lint, tests and review",
      branches: {
        lint: shell({
          exec: () => ["sh", "-c", LINT, "lint", process.execPath],
          parse: ({ stdout }) => {
            const broken = stdout.split("\n").filter(Boolean);
            return { ok: broken.length === 0, broken };
          },
          timeoutMs: 60_000,
        }),
        tests: shell({
          exec: () => [process.execPath, "--test", "--test-reporter=tap"],
          // A failing test is a verdict, not a failure of the branch: exit code 1 is an answer too.
          okExitCodes: [0, 1],
          parse: ({ exitCode, stdout }) => ({
            passed: exitCode === 0,
            failing: stdout
              .split("\n")
              .filter((line) => /^\s*not ok \d+ - /.test(line))
              .map((line) => line.replace(/^\s*not ok \d+ - /, "")),
          }),
          timeoutMs: 5 * 60_000,
        }),
        review: agent({
          session: "isolated",
          tools: ["read", "grep", "find", "ls"],
          systemPrompt: "You are a careful reviewer. Read before you judge; never change a file.",
          timeoutMs: 10 * 60_000,
          prompt: ({ input }: NodeContext<Input>) =>
            `Review ${input.task}. Read what you need, then submit your verdict and findings.`,
          output: z.object({ verdict: z.enum(["approve", "request_changes"]), findings: z.array(finding) }),
        }),
      },
      join: "all",
    }),
    verdict: decision({
      choices: ["ship", "fix"],
      decide: ({ outputs }) => {
        const { lint, tests, review } = outputs.checks as CheckOutputs;
        return lint.ok && tests.passed && review.verdict === "approve" ? "ship" : "fix";
      },
    }),
    ship: compute({ run: () => ({ verdict: "green" as const }) }),
    fix: compute({
      run: ({ outputs }) => {
        const { lint, tests, review } = outputs.checks as CheckOutputs;
        return {
          verdict: "changes needed" as const,
          syntaxErrors: lint.broken,
          failingTests: tests.failing,
          review: review.verdict === "approve" ? [] : review.findings,
        };
      },
    }),
  },
  edges: {
    checks: { to: "verdict" },
    verdict: decisionEdge({ ship: "ship", fix: "fix" }),
    ship: { to: "done" },
    fix: { to: "done" },
  },
});

/** What the join holds, by branch: each branch's parsed output. */
interface CheckOutputs {
  lint: { ok: boolean; broken: string[] };
  tests: { passed: boolean; failing: string[] };
  review: { verdict: "approve" | "request_changes"; findings: z.infer<typeof finding>[] };
}
