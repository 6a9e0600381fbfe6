import { agent, defineWorkflow, type NodeContext, shell } from "piw";
import { z } from "zod";

type Input = { task: string };

const finding = z.object({ file: z.string(), note: z.string() });

/**
 * A review from a shell: list the project's files, then hand the review to a fresh, read-only Pi
 * session with its own context (`session: "isolated"`), which reads what it needs and submits a verdict.
 * Run it with `piw run examples/review.workflow.ts "the README"`.
 */
export default defineWorkflow({
  name: "review",
  title: "Review",
  input: z.object({ task: z.string().min(1) }),
  startAt: "files",
  nodes: {
    files: shell({ exec: ["ls", "-1"], timeoutMs: 10_000, parse: ({ stdout }) => stdout }),
    review: agent({
      session: "isolated",
      tools: ["read", "grep", "find", "ls"],
      systemPrompt: "You are a careful reviewer. Read before you judge; never change a file.",
      timeoutMs: 10 * 60_000,
      prompt: ({ input, outputs }: NodeContext<Input>) =>
        `Review ${input.task}. The project's files:\n${String(outputs.files)}\n` +
        "Read what you need, then submit your verdict and findings.",
      output: z.object({
        verdict: z.enum(["approve", "request_changes"]),
        findings: z.array(finding),
      }),
    }),
  },
  edges: { files: { to: "review" }, review: { to: "done" } },
});
