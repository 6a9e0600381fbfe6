import type { AgentSessionReport } from "@piw/protocol";
import { waitFor } from "@piw/test-kit";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import {
  type AgentPlacement,
  agent,
  compileWorkflow,
  compute,
  defineWorkflow,
  executeRun,
  type IsolatedAgentSession,
  MemoryRunPort,
  parallel,
} from "../src/index.js";
import { started } from "./memory-run.js";

const REPORT: AgentSessionReport = {
  model: "test/model",
  tokensIn: 1,
  tokensOut: 1,
  cost: null,
  durationMs: 1,
  transcript: [],
  transcriptOmitted: 0,
};

/** Isolated sessions in this process that answer after a short while, or never (until aborted). */
function sessions(answer: (path: string) => string | null) {
  let open = 0;
  let most = 0;
  const closed: string[] = [];
  const placement: AgentPlacement = {
    origin: { kind: "cli" },
    workingDir: null,
    isolated: {
      async open(step) {
        open += 1;
        most = Math.max(most, open);
        const session: IsolatedAgentSession = {
          deliver: () => undefined,
          next: (signal) =>
            new Promise((resolve, reject) => {
              // As a real session's queue: a signal that aborted before the call rejects at once.
              if (signal.aborted) return reject(signal.reason);
              signal.addEventListener("abort", () => reject(signal.reason), { once: true });
              const output = answer(step.path);
              if (output === null) return;
              setTimeout(() => resolve({ type: "submission", output, respond: () => undefined }), 20);
            }),
          close: async () => {
            open -= 1;
            closed.push(step.path);
            return REPORT;
          },
        };
        return { ok: true, session };
      },
    },
  };
  return { placement, most: () => most, closed };
}

describe("parallel: agent steps in branches", () => {
  const isolated = (prompt: string) => agent({ prompt, output: z.string(), session: "isolated" });

  it("runs isolated agent steps of different branches at the same time", async () => {
    const wf = compileWorkflow(
      defineWorkflow({
        name: "reviewers",
        startAt: "fan",
        nodes: { fan: parallel({ branches: { a: isolated("A"), b: isolated("B") }, join: "all" }) },
        edges: { fan: { to: "done" } },
      }),
    );
    const fake = sessions((path) => `said ${path}`);
    const outcome = await executeRun({
      workflow: wf,
      port: started(new MemoryRunPort()),
      agents: fake.placement,
    });
    expect(outcome).toEqual({ kind: "completed", output: { a: "said fan/a/a", b: "said fan/b/b" } });
    expect(fake.most()).toBe(2);
  });

  it("aborts a losing isolated session cleanly and saves its record as cancelled", async () => {
    const wf = compileWorkflow(
      defineWorkflow({
        name: "first-wins",
        startAt: "fan",
        nodes: {
          fan: parallel({
            branches: { slow: isolated("never answers"), fast: compute({ run: () => 1 }) },
            join: "any",
          }),
        },
        edges: { fan: { to: "done" } },
      }),
    );
    const fake = sessions(() => null);
    const port = started(new MemoryRunPort());
    expect(await executeRun({ workflow: wf, port, agents: fake.placement })).toEqual({
      kind: "completed",
      output: { fast: 1 },
    });
    expect(fake.closed).toEqual(["fan/slow/slow"]);
    const record = [...port.effects.values()].find((e) => e.visitKey === "fan/slow/slow:1");
    expect(record?.state).toMatchObject({
      status: "settled",
      result: { ok: true, value: { ended: "cancelled" } },
    });
    expect(port.visits.find((v) => v.path === "fan/slow/slow")).toMatchObject({
      status: "failed",
      error: { code: "cancelled" },
    });
  });

  it("runs conversation agent steps of branches one at a time: one conversation", async () => {
    const talk = (prompt: string) => agent({ prompt, output: z.string() });
    const wf = compileWorkflow(
      defineWorkflow({
        name: "talkers",
        startAt: "fan",
        nodes: { fan: parallel({ branches: { a: talk("first"), b: talk("second") }, join: "all" }) },
        edges: { fan: { to: "done" } },
      }),
    );
    const port = started(new MemoryRunPort({ runId: "talk" }));
    const running = executeRun({ workflow: wf, port });
    const prompts = () => port.messages.filter((m) => m.kind === "step_prompt").map((m) => m.path);
    await waitFor("the first prompt", () => prompts().length > 0);
    // Both visits are open, but only one step has the conversation.
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(prompts()).toEqual(["fan/a/a"]);
    port.submit("one");
    await waitFor("the second prompt", () => prompts().length === 2);
    expect(prompts()).toEqual(["fan/a/a", "fan/b/b"]);
    port.submit("two");
    expect(await running).toEqual({ kind: "completed", output: { a: "one", b: "two" } });
  });
});
