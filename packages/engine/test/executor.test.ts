import { describe, expect, it } from "vitest";
import { z } from "zod";
import {
  type ActionContext,
  action,
  agent,
  checkpoint,
  compileWorkflow,
  compute,
  decision,
  decisionEdge,
  defineWorkflow,
  executeRun,
  MAX_AGENT_NUDGES,
  MAX_LOST_AGENT_TURNS,
  MemoryRunPort,
  notify,
  shell,
} from "../src/index.js";
import { forever, runUntilIdle, started } from "./memory-run.js";
import { release } from "./fixtures.js";

describe("executing a run", () => {
  it("runs a compute chain to completion and saves every visit", async () => {
    const wf = compileWorkflow(
      defineWorkflow({
        name: "chain",
        input: z.object({ n: z.number() }),
        startAt: "a",
        nodes: {
          a: compute({ run: ({ input }) => (input as { n: number }).n + 1 }),
          b: compute({ run: ({ outputs }) => (outputs.a as number) * 10 }),
        },
        edges: { a: { to: "b" }, b: { to: "done" } },
      }),
    );
    const port = started(new MemoryRunPort({ input: { n: 1 } }));
    const outcome = await executeRun({ workflow: wf, port });
    expect(outcome).toEqual({ kind: "completed", output: 20 });
    expect(port.visits.map((v) => [v.path, v.visit, v.status, v.output])).toEqual([
      ["a", 1, "succeeded", 2],
      ["b", 1, "succeeded", 20],
    ]);
    expect(port.ending).toEqual({ outcome: "completed", output: 20 });
  });

  it("retries an unfinished visit with the same visit number and never repeats finished ones", async () => {
    let aCalls = 0;
    let crash = true;
    const wf = compileWorkflow(
      defineWorkflow({
        name: "crashy",
        startAt: "a",
        nodes: {
          a: compute({ run: () => ++aCalls }),
          b: compute({ run: () => (crash ? forever() : "ok") }),
        },
        edges: { a: { to: "b" }, b: { to: "done" } },
      }),
    );
    const first = started(new MemoryRunPort());
    await runUntilIdle(executeRun({ workflow: wf, port: first }));
    expect(first.visits.map((v) => [v.path, v.status])).toEqual([
      ["a", "succeeded"],
      ["b", "running"],
    ]);
    crash = false;
    const second = started(first.reopen());
    expect(await executeRun({ workflow: wf, port: second })).toEqual({ kind: "completed", output: "ok" });
    expect(aCalls).toBe(1);
    expect(second.visits.find((v) => v.path === "b")).toMatchObject({
      visit: 1,
      attempt: 2,
      status: "succeeded",
    });
  });

  it("gives a later loop visit the next number and fails the run past maxSteps", async () => {
    const wf = compileWorkflow(
      defineWorkflow({
        name: "looper",
        startAt: "tick",
        maxSteps: 7,
        nodes: {
          tick: compute({ run: ({ node }) => node.visit }),
          check: decision({ choices: ["again", "stop"], decide: () => "again" }),
        },
        edges: { tick: { to: "check" }, check: decisionEdge({ again: "tick", stop: "done" }) },
      }),
    );
    const port = started(new MemoryRunPort());
    const outcome = await executeRun({ workflow: wf, port });
    expect(outcome).toMatchObject({ kind: "failed", error: { code: "max_steps_exceeded" } });
    expect(port.visits.filter((v) => v.path === "tick").map((v) => v.visit)).toEqual([1, 2, 3, 4]);
    expect(port.visits.filter((v) => v.path === "tick").map((v) => v.output)).toEqual([1, 2, 3, 4]);
  });
});

describe("managed effects", () => {
  function effectWorkflow(mode: "idempotent" | "manual", body: () => unknown) {
    return compileWorkflow(
      defineWorkflow({
        name: "effects",
        startAt: "act",
        nodes: {
          act: action({
            run: ({ effects }: ActionContext) => effects[mode]("deploy", { target: "prod" }, body),
          }),
        },
        edges: { act: { to: "done" } },
      }),
    );
  }

  it("re-runs an idempotent effect interrupted between reserve and settle, with the same identity", async () => {
    let calls = 0;
    let hang = true;
    const wf = effectWorkflow("idempotent", () => {
      calls += 1;
      return hang ? forever() : "deployed";
    });
    const first = started(new MemoryRunPort());
    await runUntilIdle(executeRun({ workflow: wf, port: first }));
    const [reservedId] = [...first.effects.keys()];
    expect(first.effects.get(reservedId ?? "")?.state.status).toBe("reserved");
    hang = false;
    const second = started(first.reopen());
    expect(await executeRun({ workflow: wf, port: second })).toEqual({
      kind: "completed",
      output: "deployed",
    });
    expect(calls).toBe(2);
    expect([...second.effects.keys()]).toEqual([reservedId]);
  });

  it("parks the run when a manual effect was interrupted, instead of guessing", async () => {
    let calls = 0;
    const wf = effectWorkflow("manual", () => {
      calls += 1;
      return forever();
    });
    const first = started(new MemoryRunPort());
    await runUntilIdle(executeRun({ workflow: wf, port: first }));
    const second = started(first.reopen());
    expect(await executeRun({ workflow: wf, port: second })).toEqual({
      kind: "parked",
      reason: "manual_effect_unsettled",
    });
    expect(calls).toBe(1);
    expect(second.status).toBe("parked");
  });

  it("never runs a settled effect twice when the node is retried", async () => {
    let calls = 0;
    let hangAfter = true;
    const wf = compileWorkflow(
      defineWorkflow({
        name: "settled",
        startAt: "act",
        nodes: {
          act: action({
            run: async ({ effects }: ActionContext) => {
              const r = await effects.idempotent("charge", { cents: 100 }, () => {
                calls += 1;
                return "charged";
              });
              return hangAfter ? forever() : r;
            },
          }),
        },
        edges: { act: { to: "done" } },
      }),
    );
    const first = started(new MemoryRunPort());
    await runUntilIdle(executeRun({ workflow: wf, port: first }));
    hangAfter = false;
    const second = started(first.reopen());
    expect(await executeRun({ workflow: wf, port: second })).toEqual({
      kind: "completed",
      output: "charged",
    });
    expect(calls).toBe(1);
  });

  it("gives two mounts of one action different identities (the composed-workflow collision)", async () => {
    const wf = compileWorkflow(release);
    const port = started(new MemoryRunPort({ input: { repo: "piw" } }));
    // The documentation child stops at its agent step; both workspace mounts ran before it.
    await runUntilIdle(executeRun({ workflow: wf, port }));
    expect(port.messages.map((m) => m.path)).toEqual(["documentation/write"]);
    const ids = [...port.effects.keys()];
    expect(ids).toHaveLength(2);
    expect(new Set(ids).size).toBe(2);
    expect(ids.some((id) => id.includes("/workspace/inspect#1/"))).toBe(true);
    expect(ids.some((id) => id.includes("/documentation/workspace/inspect#1/"))).toBe(true);
  });
});

describe("agent, checkpoint, notify and shell nodes", () => {
  const review = compileWorkflow(
    defineWorkflow({
      name: "review",
      startAt: "write",
      nodes: {
        write: agent({
          prompt: "Write a haiku",
          output: z.object({ lines: z.array(z.string()).length(3) }),
          validate: (out: { lines: string[] }) =>
            out.lines.some((l) => l.length === 0) ? "empty line" : undefined,
        }),
      },
      edges: { write: { to: "done" } },
    }),
  );

  it("delivers a step prompt, rejects invalid output with a reason, and accepts a corrected one", async () => {
    const port = started(new MemoryRunPort({ runId: "r1" }));
    const running = executeRun({ workflow: review, port });
    port.submit({ lines: ["a", "b"] });
    port.submit({ lines: ["a", "", "c"] });
    port.submit({ lines: ["a", "b", "c"] });
    expect(await running).toEqual({ kind: "completed", output: { lines: ["a", "b", "c"] } });
    expect(port.messages[0]).toMatchObject({
      messageId: "msg:r1:write:1:step:1",
      kind: "step_prompt",
      triggerTurn: true,
    });
    expect(port.verdicts.map((v) => v.accepted)).toEqual([false, false, true]);
    expect(port.verdicts[0]).toMatchObject({ reason: expect.stringContaining("lines") });
    expect(port.verdicts[1]).toMatchObject({ reason: expect.stringContaining("empty line") });
  });

  it("nudges after a turn without submission, then fails the step after the last nudge", async () => {
    const port = started(new MemoryRunPort({ runId: "r2" }));
    const running = executeRun({ workflow: review, port });
    for (let i = 0; i <= MAX_AGENT_NUDGES; i += 1) port.endTurn();
    const outcome = await running;
    expect(outcome).toMatchObject({ kind: "failed", error: { code: "node_failed" } });
    expect(port.messages.map((m) => m.messageId)).toEqual([
      "msg:r2:write:1:step:1",
      "msg:r2:write:1:nudge:1:1",
      "msg:r2:write:1:nudge:1:2",
    ]);
  });

  it("never counts lost turns or provider errors against the reminder budget", async () => {
    const port = started(new MemoryRunPort({ runId: "r3" }));
    const running = executeRun({ workflow: review, port });
    // Fewer than MAX_LOST_AGENT_TURNS in a row each time, around every reminder the model may use.
    const notTheModels = ["lost", "error", "error", "lost"] as const;
    const ends = [
      ...notTheModels.slice(0, MAX_LOST_AGENT_TURNS - 1),
      "completed",
      ...notTheModels.slice(2, 2 + MAX_LOST_AGENT_TURNS - 1),
      "completed",
    ] as const;
    for (const ending of ends) port.endTurn(ending);
    port.submit({ lines: ["a", "b", "c"] });
    expect(await running).toEqual({ kind: "completed", output: { lines: ["a", "b", "c"] } });
    expect(port.messages.map((m) => m.messageId)).toEqual([
      "msg:r3:write:1:step:1",
      "msg:r3:write:1:retry:1:1",
      "msg:r3:write:1:retry:1:2",
      "msg:r3:write:1:nudge:1:1",
      "msg:r3:write:1:retry:1:3",
      "msg:r3:write:1:retry:1:4",
      "msg:r3:write:1:nudge:1:2",
    ]);
    // A retry asks again with the step prompt itself: a crashed Pi may never have shown it.
    expect(port.messages[1]?.body).toContain("Write a haiku");
    expect(port.messages[1]?.body).toContain("the turn was lost");
    expect(port.messages[4]?.body).toContain("the model provider failed");
  });

  it.each([
    ["lost", "lost", "lost"],
    ["error", "error", "error"],
    ["lost", "error", "lost"],
  ] as const)(
    "parks the run with agent_turns_lost after %s, %s, %s turns in a row, keeping the visit open",
    async (...ends) => {
      expect(ends).toHaveLength(MAX_LOST_AGENT_TURNS);
      const port = started(new MemoryRunPort({ runId: "r4" }));
      const running = executeRun({ workflow: review, port });
      for (const ending of ends) port.endTurn(ending);
      expect(await running).toEqual({ kind: "parked", reason: "agent_turns_lost" });
      expect(port.parkedReason).toMatchObject({ code: "agent_turns_lost", path: "write" });
      expect(port.visits.map((v) => [v.path, v.visit, v.status])).toEqual([["write", 1, "running"]]);
    },
  );

  it("fails the step with model_unavailable at the first turn the provider refused for good, even with a retry policy", async () => {
    const retried = compileWorkflow(
      defineWorkflow({
        name: "retried",
        startAt: "write",
        nodes: {
          write: agent({
            prompt: "Write a haiku",
            output: z.string(),
            retry: { attempts: 3, backoff: { initialMs: 1 } },
          }),
        },
        edges: { write: { to: "done" } },
      }),
    );
    const port = started(new MemoryRunPort({ runId: "r6" }));
    const running = executeRun({ workflow: retried, port });
    port.endTurn("model_unavailable");
    const outcome = await running;
    expect(outcome).toMatchObject({
      kind: "failed",
      error: { code: "model_unavailable", message: expect.stringContaining("Agent step write:") },
    });
    // Not prompted again, and the node's retry policy does not try a model that cannot answer.
    expect(port.messages.map((m) => m.messageId)).toEqual(["msg:r6:write:1:step:1"]);
    expect(port.parkedReason).toBeNull();
  });

  it("starts a new streak of lost turns after the model submits", async () => {
    const port = started(new MemoryRunPort({ runId: "r5" }));
    const running = executeRun({ workflow: review, port });
    for (let i = 1; i < MAX_LOST_AGENT_TURNS; i += 1) port.endTurn("lost");
    port.submit({ lines: ["a", "b"] });
    for (let i = 1; i < MAX_LOST_AGENT_TURNS; i += 1) port.endTurn("error");
    port.submit({ lines: ["a", "b", "c"] });
    expect(await running).toEqual({ kind: "completed", output: { lines: ["a", "b", "c"] } });
    expect(port.verdicts.map((v) => v.accepted)).toEqual([false, true]);
  });

  it("ends waiting at a checkpoint, and a continuation carries the accepted answer forward", async () => {
    const wf = compileWorkflow(
      defineWorkflow({
        name: "approval",
        startAt: "draft",
        nodes: {
          draft: compute({ run: () => "v1" }),
          approve: checkpoint({
            prompt: ({ outputs }) => `Approve ${outputs.draft}?`,
            answer: z.object({ ok: z.boolean() }),
          }),
          publish: compute({ run: ({ outputs }) => ({ draft: outputs.draft, approved: outputs.approve }) }),
          tell: notify({ message: "published" }),
        },
        edges: {
          draft: { to: "approve" },
          approve: { to: "publish" },
          publish: { to: "tell" },
          tell: { to: "done" },
        },
      }),
    );
    const parent = started(new MemoryRunPort({ runId: "p" }));
    expect(await executeRun({ workflow: wf, port: parent })).toEqual({
      kind: "waiting",
      path: "approve",
      visit: 1,
    });
    expect(parent.ending).toMatchObject({
      outcome: "waiting",
      checkpoint: { path: "approve", visit: 1, prompt: "Approve v1?" },
      // The answer schema travels as data, for the host to check answers without workflow code.
      answerCheck: {
        kind: "json_schema",
        schema: { type: "object", properties: { ok: { type: "boolean" } }, required: ["ok"] },
      },
    });
    const child = started(
      new MemoryRunPort({
        runId: "c",
        accepted: { path: "approve", visit: 1, answer: { ok: true } },
        carriedOutputs: { draft: "v1" },
      }),
    );
    expect(await executeRun({ workflow: wf, port: child })).toEqual({ kind: "completed", output: null });
    expect(child.visits.map((v) => v.path)).toEqual(["publish", "tell"]);
    expect(child.visits[0]?.output).toEqual({ draft: "v1", approved: { ok: true } });
    expect(child.messages).toMatchObject([
      { messageId: "msg:c:tell:1:notify", kind: "notify", triggerTurn: false },
    ]);
  });

  it("runs a command as argv, parses its output, and fails on a non-zero exit without saving stderr", async () => {
    const wf = compileWorkflow(
      defineWorkflow({
        name: "sh",
        startAt: "count",
        nodes: {
          count: shell({
            exec: ["node", "-e", "process.stdout.write('3')"],
            parse: ({ stdout }) => Number(stdout),
          }),
          bad: shell({ exec: ["node", "-e", "console.error('secret-token'); process.exit(4)"] }),
        },
        edges: { count: { to: "bad" }, bad: { to: "done" } },
      }),
    );
    const port = started(new MemoryRunPort());
    const outcome = await executeRun({ workflow: wf, port });
    expect(port.visits[0]).toMatchObject({ status: "succeeded", output: 3 });
    expect(outcome).toMatchObject({
      kind: "failed",
      error: { code: "node_failed", message: expect.stringContaining("code 4") },
    });
    expect(JSON.stringify(port.ending)).not.toContain("secret-token");
  });

  it("times a command out, kills its process group and saves timed_out", async () => {
    const wf = compileWorkflow(
      defineWorkflow({
        name: "slow",
        startAt: "sleep",
        nodes: { sleep: shell({ exec: { shell: "sleep 30 & sleep 30; wait" }, timeoutMs: 200 }) },
        edges: { sleep: { to: "done" } },
      }),
    );
    const port = started(new MemoryRunPort());
    const begin = Date.now();
    const outcome = await executeRun({ workflow: wf, port });
    expect(Date.now() - begin).toBeLessThan(10_000);
    expect(outcome).toMatchObject({ kind: "timed_out", error: { code: "node_timed_out" } });
    expect(port.visits[0]?.status).toBe("timed_out");
  });
});

describe("control", () => {
  const chain = compileWorkflow(
    defineWorkflow({
      name: "ctl",
      startAt: "a",
      nodes: { a: compute({ run: () => 1 }), b: compute({ run: () => 2 }) },
      edges: { a: { to: "b" }, b: { to: "done" } },
    }),
  );

  it("parks at the next node boundary when a pause was requested", async () => {
    const port = started(new MemoryRunPort());
    port.pauseRequested = true;
    expect(await executeRun({ workflow: chain, port })).toEqual({ kind: "parked", reason: "paused" });
    expect(port.visits).toEqual([]);
  });

  it("stops without writing once the claim is gone (cancelled)", async () => {
    let release: () => void = () => {};
    const wf = compileWorkflow(
      defineWorkflow({
        name: "cancelme",
        startAt: "wait",
        nodes: {
          wait: compute({ run: () => new Promise<number>((resolve) => (release = () => resolve(1))) }),
          after: compute({ run: () => 2 }),
        },
        edges: { wait: { to: "after" }, after: { to: "done" } },
      }),
    );
    const port = started(new MemoryRunPort());
    const running = executeRun({ workflow: wf, port });
    await new Promise((resolve) => setTimeout(resolve, 20));
    port.cancel();
    release();
    expect((await running).kind).toBe("superseded");
    expect(port.visits.map((v) => [v.path, v.status])).toEqual([["wait", "running"]]);
  });
});

describe("determinism guards", () => {
  it("fails the node with effect_conflict when a retry asks for the same effect with another request", async () => {
    let attempt = 0;
    let hang = true;
    const wf = compileWorkflow(
      defineWorkflow({
        name: "nondeterministic",
        startAt: "act",
        nodes: {
          act: action({
            run: ({ effects }: ActionContext) => {
              attempt += 1;
              return effects.idempotent("send", { attempt }, () => (hang ? forever() : "sent"));
            },
          }),
        },
        edges: { act: { to: "done" } },
      }),
    );
    const first = started(new MemoryRunPort());
    await runUntilIdle(executeRun({ workflow: wf, port: first }));
    hang = false;
    const second = started(first.reopen());
    const outcome = await executeRun({ workflow: wf, port: second });
    expect(outcome).toMatchObject({ kind: "failed", error: { code: "effect_conflict" } });
    expect(second.visits[0]).toMatchObject({ status: "failed", error: { code: "effect_conflict" } });
  });

  it("refuses a continuation whose answer does not fit the checkpoint's schema", async () => {
    const wf = compileWorkflow(
      defineWorkflow({
        name: "strict-answer",
        startAt: "ask",
        nodes: {
          ask: checkpoint({ prompt: "ok?", answer: z.object({ approved: z.boolean() }) }),
          after: compute({ run: () => "ran" }),
        },
        edges: { ask: { to: "after" }, after: { to: "done" } },
      }),
    );
    const port = started(
      new MemoryRunPort({ accepted: { path: "ask", visit: 1, answer: { approved: "yes" } } }),
    );
    const outcome = await executeRun({ workflow: wf, port });
    expect(outcome).toMatchObject({
      kind: "failed",
      error: { code: "answer_invalid", message: expect.stringContaining("approved") },
    });
    expect(port.visits).toEqual([]);
  });
});
