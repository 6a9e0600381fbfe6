import { readdirSync, readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import {
  type ActionContext,
  action,
  compileWorkflow,
  compute,
  defineWorkflow,
  executeRun,
  MemoryRunPort,
  parallel,
  shell,
  wait,
  type WorkflowDefinition,
} from "../src/index.js";
import { boundedFork, forever, runUntilIdle, started } from "./memory-run.js";

function ownGroup(): number {
  const stat = readFileSync("/proc/self/stat", "utf8");
  return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[2]);
}

/** Whether any process of the group still runs; a killed one nobody reaped yet (a zombie) does not. */
function groupAlive(pgid: number): boolean {
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${entry}/stat`, "utf8");
    } catch {
      continue;
    }
    // Fields after the command's closing parenthesis: state, ppid, pgrp, ...
    const [state, , pgrp] = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    if (Number(pgrp) === pgid && state !== "Z" && state !== "X") return true;
  }
  return false;
}

/** A fork `fan` between `before` and `after`; `after` returns what it saw of the fork. */
function around(fan: ReturnType<typeof parallel>, extra: Record<string, unknown> = {}): WorkflowDefinition {
  return defineWorkflow({
    name: "around",
    input: z.object({ word: z.string() }),
    startAt: "before",
    nodes: {
      before: compute({ run: () => "ready" }),
      fan,
      after: compute({ run: ({ outputs }) => outputs.fan }),
      ...extra,
    },
    edges: { before: { to: "fan" }, fan: { to: "after" }, after: { to: "done" }, ...extra },
  } as never) as WorkflowDefinition;
}

const review = defineWorkflow({
  name: "review",
  input: z.object({ word: z.string() }),
  startAt: "read",
  nodes: {
    read: compute<{ word: string }>({ run: ({ input }) => input.word.length }),
    judge: compute({ run: ({ outputs }) => ({ length: outputs.read, verdict: "ok" }) }),
  },
  edges: { read: { to: "judge" }, judge: { to: "done" } },
});

describe("parallel: joins", () => {
  it("joins all: the next node sees every branch's output by name, and each visit has its full path", async () => {
    const wf = compileWorkflow(
      around(
        parallel({
          branches: {
            lint: shell({ exec: ["sh", "-c", "echo clean"], parse: (r) => r.stdout }),
            review,
            count: compute<{ word: string }>({ run: ({ input }) => input.word.toUpperCase() }),
          },
          join: "all",
        }),
      ),
    );
    const port = started(new MemoryRunPort({ input: { word: "hello" } }));
    const outcome = await executeRun({ workflow: wf, port });
    const joined = { lint: "clean", review: { length: 5, verdict: "ok" }, count: "HELLO" };
    expect(outcome).toEqual({ kind: "completed", output: joined });
    expect(new Set(port.visits.map((v) => `${v.path}#${v.visit}:${v.status}`))).toEqual(
      new Set([
        "before#1:succeeded",
        "fan#1:succeeded",
        "fan/lint/lint#1:succeeded",
        "fan/review/read#1:succeeded",
        "fan/review/judge#1:succeeded",
        "fan/count/count#1:succeeded",
        "after#1:succeeded",
      ]),
    );
    // The fork's visit opens before its branches' and closes after them.
    expect(port.visits[1]?.path).toBe("fan");
    expect(port.visits.at(-1)?.path).toBe("after");
  });

  it("joins any: the first branch wins, and a loser's real process group is killed and saved cancelled", async () => {
    const groups: number[] = [];
    const wf = compileWorkflow(
      around(
        parallel({
          branches: {
            slow: shell({ exec: ["sh", "-c", "sleep 60 & wait"] }),
            fast: action({
              run: async () => {
                // Let the slow command start its group first.
                while (groups.length === 0) await new Promise((r) => setTimeout(r, 5));
                return "first";
              },
            }),
          },
          join: "any",
        }),
      ),
    );
    const port = started(new MemoryRunPort({ input: { word: "x" } }));
    const outcome = await executeRun({
      workflow: wf,
      port,
      onProcessGroup: (pgid, alive) => {
        if (alive) groups.push(pgid);
      },
    });
    expect(outcome).toEqual({ kind: "completed", output: { fast: "first" } });
    expect(groups).toHaveLength(1);
    expect(groupAlive(groups[0] as number)).toBe(false);
    // The check can fail: a group with a running process (this test's own) is alive.
    expect(groupAlive(ownGroup())).toBe(true);
    const slow = port.visits.find((v) => v.path === "fan/slow/slow");
    expect(slow).toMatchObject({ status: "failed", error: { code: "cancelled" } });
    expect(slow?.error?.message).toContain("Branch slow of fan was cancelled");
  });

  it("joins atLeast k: tolerates failures while k can still succeed, and fails once it cannot", async () => {
    const ok = (v: string) => compute({ run: () => v });
    const bad = compute({
      run: () => {
        throw new Error("no");
      },
    });
    const two = compileWorkflow(
      around(parallel({ branches: { a: ok("A"), b: bad, c: ok("C") }, join: { atLeast: 2 } })),
    );
    const port = started(new MemoryRunPort({ input: { word: "x" } }));
    expect(await executeRun({ workflow: two, port })).toEqual({
      kind: "completed",
      output: { a: "A", c: "C" },
    });

    const none = compileWorkflow(
      around(parallel({ branches: { a: ok("A"), b: bad, c: bad }, join: { atLeast: 2 } })),
    );
    const failing = started(new MemoryRunPort({ input: { word: "x" } }));
    const outcome = await executeRun({ workflow: none, port: failing });
    expect(outcome).toMatchObject({ kind: "failed", error: { code: "node_failed" } });
    expect(outcome.kind === "failed" && outcome.error.message).toMatch(/^Branch b of fan failed: /);
    expect(failing.visits.find((v) => v.path === "fan")?.status).toBe("failed");
  });
});

describe("parallel: failures and routes", () => {
  const boom = shell({ exec: ["sh", "-c", "exit 3"] });

  it("fails the run on an unrouted branch failure, after the other branches ended", async () => {
    const wf = compileWorkflow(
      around(parallel({ branches: { bad: boom, good: compute({ run: () => 1 }) }, join: "all" })),
    );
    const port = started(new MemoryRunPort({ input: { word: "x" } }));
    const outcome = await executeRun({ workflow: wf, port });
    expect(outcome).toMatchObject({ kind: "failed", error: { code: "node_failed" } });
    expect(outcome.kind === "failed" && outcome.error.message).toBe(
      "Branch bad of fan failed: Command of fan/bad/bad exited with code 3.",
    );
    expect(port.visits.some((v) => v.status === "running")).toBe(false);
  });

  it("routes the parallel node's failure with onFailure, and the handler sees it in ctx.failures", async () => {
    const wf = compileWorkflow(
      defineWorkflow({
        name: "routed",
        startAt: "fan",
        nodes: {
          fan: parallel({ branches: { bad: boom, good: compute({ run: () => 1 }) }, join: "all" }),
          recover: compute({ run: ({ failures }) => failures.fan?.message ?? "none" }),
        },
        edges: { fan: { to: "done", onFailure: "recover" }, recover: { to: "done" } },
      }),
    );
    const port = started(new MemoryRunPort());
    expect(await executeRun({ workflow: wf, port })).toEqual({
      kind: "completed",
      output: "Branch bad of fan failed: Command of fan/bad/bad exited with code 3.",
    });
  });

  it("routes a failure inside a branch to a node of the same branch", async () => {
    const branch = defineWorkflow({
      name: "fixing",
      startAt: "try",
      nodes: {
        try: boom,
        fix: compute({ run: ({ failures }) => `fixed after ${failures.try?.shell?.exitCode}` }),
      },
      edges: { try: { to: "done", onFailure: "fix" }, fix: { to: "done" } },
    });
    const wf = compileWorkflow(around(parallel({ branches: { fixing: branch }, join: "all" })));
    const port = started(new MemoryRunPort({ input: { word: "x" } }));
    expect(await executeRun({ workflow: wf, port })).toEqual({
      kind: "completed",
      output: { fixing: "fixed after 3" },
    });
  });
});

describe("parallel: scheduling", () => {
  function gauged(concurrency?: number) {
    let active = 0;
    let most = 0;
    const step = () =>
      action({
        run: async () => {
          active += 1;
          most = Math.max(most, active);
          await new Promise((resolve) => setTimeout(resolve, 20));
          active -= 1;
          return most;
        },
      });
    const fan = parallel({
      branches: { a: step(), b: step(), c: step(), d: step(), e: step() },
      join: "all",
      ...(concurrency === undefined ? {} : { concurrency }),
    });
    return { wf: compileWorkflow(around(fan)), most: () => most };
  }

  it("runs at most `concurrency` branches at once, and all of them without a cap", async () => {
    const capped = gauged(2);
    await executeRun({ workflow: capped.wf, port: started(new MemoryRunPort({ input: { word: "x" } })) });
    expect(capped.most()).toBe(2);
    const free = gauged();
    await executeRun({ workflow: free.wf, port: started(new MemoryRunPort({ input: { word: "x" } })) });
    expect(free.most()).toBe(5);
  });

  it("counts every branch visit against maxSteps", async () => {
    const wf = boundedFork();
    const outcome = await executeRun({ workflow: wf, port: started(new MemoryRunPort()) });
    expect(outcome).toMatchObject({ kind: "failed", error: { code: "max_steps_exceeded" } });
  });

  it("parks the run on a wait in a branch only once the other branches have finished", async () => {
    const wf = compileWorkflow(
      around(
        parallel({
          branches: { pause: wait({ ms: 60_000 }), work: compute({ run: () => "done" }) },
          join: "all",
        }),
      ),
    );
    const port = started(new MemoryRunPort({ input: { word: "x" } }));
    const outcome = await executeRun({ workflow: wf, port });
    expect(outcome).toEqual({ kind: "parked", reason: "waiting" });
    expect(port.parkedReason).toMatchObject({ code: "waiting", path: "fan/pause/pause", visit: 1 });
    expect(port.visits.find((v) => v.path === "fan/work/work")?.status).toBe("succeeded");
    expect(port.visits.find((v) => v.path === "fan")?.status).toBe("running");
  });

  it("keeps each branch's wait time when several branches wait: each visit saves its own due time", async () => {
    const wf = compileWorkflow(
      around(
        parallel({
          branches: {
            soon: wait({ ms: 60_000 }),
            later: wait({ ms: 120_000 }),
            work: compute({ run: () => 1 }),
          },
          join: "all",
        }),
      ),
    );
    const untils = (port: MemoryRunPort) => {
      const seen = new Map<string, number>();
      const schedule = port.scheduleVisit.bind(port);
      port.scheduleVisit = async (reason) => {
        if (reason.code === "waiting") seen.set(reason.path, reason.until);
        return schedule(reason);
      };
      return seen;
    };
    const first = started(new MemoryRunPort({ input: { word: "x" } }));
    const before = untils(first);
    expect(await executeRun({ workflow: wf, port: first })).toEqual({ kind: "parked", reason: "waiting" });
    // The run parks for the earliest of the two.
    expect(first.parkedReason).toMatchObject({ path: "fan/soon/soon", until: before.get("fan/soon/soon") });
    expect(before.size).toBe(2);
    // Woken early (a resume): both waits park again for the times they first saved, not counted anew.
    await new Promise((resolve) => setTimeout(resolve, 20));
    const second = started(first.reopen());
    const after = untils(second);
    expect(await executeRun({ workflow: wf, port: second })).toEqual({ kind: "parked", reason: "waiting" });
    expect(after).toEqual(before);
  });

  it("stops every branch when the run is cancelled, killing their commands", async () => {
    const groups: number[] = [];
    const sleeper = () => shell({ exec: ["sh", "-c", "sleep 60 & wait"] });
    const wf = compileWorkflow(around(parallel({ branches: { a: sleeper(), b: sleeper() }, join: "all" })));
    const port = started(new MemoryRunPort({ input: { word: "x" } }));
    const controller = new AbortController();
    const running = executeRun({
      workflow: wf,
      port,
      signal: controller.signal,
      onProcessGroup: (pgid, alive) => {
        if (alive) groups.push(pgid);
        if (groups.length === 2 && alive) {
          // As the host's cancel arrives: the store first, then the worker's signal.
          setImmediate(() => {
            port.status = "cancelled";
            controller.abort();
          });
        }
      },
    });
    const outcome = await running;
    expect(outcome.kind).toBe("superseded");
    expect(groups).toHaveLength(2);
    expect(groups.every((g) => !groupAlive(g))).toBe(true);
  });

  it("runs a parallel node nested in a branch", async () => {
    const inner = parallel({
      branches: { x: compute({ run: () => 1 }), y: compute({ run: () => 2 }) },
      join: "all",
    });
    const wf = compileWorkflow(
      around(parallel({ branches: { inner, z: compute({ run: () => 3 }) }, join: "all" })),
    );
    const port = started(new MemoryRunPort({ input: { word: "x" } }));
    expect(await executeRun({ workflow: wf, port })).toEqual({
      kind: "completed",
      output: { inner: { x: 1, y: 2 }, z: 3 },
    });
  });
});

describe("parallel: pause, deadlines and retries in branches", () => {
  it("pauses at the first node boundary a branch reaches, and the resume runs only what had not finished", async () => {
    const runs = { a: 0, b: 0 };
    let port: MemoryRunPort | undefined;
    const branch = defineWorkflow({
      name: "two-steps",
      startAt: "one",
      nodes: {
        one: compute({
          run: () => {
            runs.a += 1;
            // Asked while the branch's first node runs: the branch's next boundary parks the run.
            if (port) port.pauseRequested = true;
            return 1;
          },
        }),
        two: compute({ run: () => 2 }),
      },
      edges: { one: { to: "two" }, two: { to: "done" } },
    });
    const other = compute({
      run: () => {
        runs.b += 1;
        return "b";
      },
    });
    const wf = compileWorkflow(
      around(parallel({ branches: { a: branch, b: other }, join: "all", concurrency: 1 })),
    );
    port = started(new MemoryRunPort({ input: { word: "x" } }));
    expect(await executeRun({ workflow: wf, port })).toEqual({ kind: "parked", reason: "paused" });
    expect(port.visits.find((v) => v.path === "fan/a/one")?.status).toBe("succeeded");
    expect(port.visits.find((v) => v.path === "fan/b/b")).toBeUndefined();
    const resumed = started(port.reopen());
    port = undefined;
    expect(await executeRun({ workflow: wf, port: resumed })).toEqual({
      kind: "completed",
      output: { a: 2, b: "b" },
    });
    expect(runs).toEqual({ a: 1, b: 1 });
  });

  it("times out a branch's node at its deadline, which fails the join", async () => {
    const wf = compileWorkflow(
      around(
        parallel({
          branches: {
            slow: shell({ exec: ["sleep", "30"], timeoutMs: 200 }),
            fast: compute({ run: () => 1 }),
          },
          join: "all",
        }),
      ),
    );
    const port = started(new MemoryRunPort({ input: { word: "x" } }));
    const outcome = await executeRun({ workflow: wf, port });
    expect(outcome).toMatchObject({ kind: "failed", error: { code: "node_timed_out" } });
    expect(port.visits.find((v) => v.path === "fan/slow/slow")?.status).toBe("timed_out");
  });

  it("retries a branch's node after its pause: the run parks on the clock once the other branch is done", async () => {
    let attempts = 0;
    const flaky = action({
      retry: { attempts: 2, backoff: { initialMs: 60_000 } },
      run: () => {
        attempts += 1;
        if (attempts === 1) throw new Error("first attempt fails");
        return "second";
      },
    });
    const wf = compileWorkflow(
      around(parallel({ branches: { flaky, steady: compute({ run: () => "steady" }) }, join: "all" })),
    );
    const first = started(new MemoryRunPort({ input: { word: "x" } }));
    expect(await executeRun({ workflow: wf, port: first })).toEqual({
      kind: "parked",
      reason: "retry_waiting",
    });
    expect(first.parkedReason).toMatchObject({ code: "retry_waiting", path: "fan/flaky/flaky", attempt: 2 });
    expect(first.visits.find((v) => v.path === "fan/steady/steady")?.status).toBe("succeeded");
    // A resume before the pause is over: in a branch the attempt is not run early, it parks again.
    const dueAt = (first.parkedReason as { at: number }).at;
    const resumed = started(first.reopen());
    expect(await executeRun({ workflow: wf, port: resumed })).toEqual({
      kind: "parked",
      reason: "retry_waiting",
    });
    expect(resumed.parkedReason).toMatchObject({ code: "retry_waiting", attempt: 2, at: dueAt });
    expect(attempts).toBe(1);
  });
});

describe("parallel: a loser waiting on the clock", () => {
  it("cancels a branch whose retry pause waits for the fork, and saves its visit cancelled", async () => {
    const wf = compileWorkflow(
      around(
        parallel({
          branches: {
            flaky: action({
              retry: { attempts: 3, backoff: { initialMs: 60_000 } },
              run: () => {
                throw new Error("always fails");
              },
            }),
            winner: action({
              run: async () => {
                await new Promise((resolve) => setTimeout(resolve, 30));
                return "won";
              },
            }),
          },
          join: "any",
        }),
      ),
    );
    const port = started(new MemoryRunPort({ input: { word: "x" } }));
    expect(await executeRun({ workflow: wf, port })).toEqual({
      kind: "completed",
      output: { winner: "won" },
    });
    expect(port.parkedReason).toBeNull();
    expect(port.visits.find((v) => v.path === "fan/flaky/flaky")).toMatchObject({
      status: "failed",
      error: { code: "cancelled" },
    });
    expect(port.visits.filter((v) => v.status === "running")).toEqual([]);
  });
});

describe("parallel: crash recovery", () => {
  it("re-runs only the branch that had not finished, and never a settled effect", async () => {
    let hang = true;
    const performed: string[] = [];
    const calls = { a: 0, b: 0 };
    const effectful = (name: "a" | "b") =>
      action({
        run: async ({ effects }: ActionContext) => {
          calls[name] += 1;
          await effects.idempotent("note", { name }, () => {
            performed.push(name);
            return name;
          });
          if (name === "b" && hang) return forever();
          return `${name} done`;
        },
      });
    const wf = compileWorkflow(
      around(parallel({ branches: { a: effectful("a"), b: effectful("b") }, join: "all" })),
    );
    const first = started(new MemoryRunPort({ input: { word: "x" } }));
    await runUntilIdle(executeRun({ workflow: wf, port: first }), 100);
    expect(first.visits.find((v) => v.path === "fan/a/a")?.status).toBe("succeeded");
    expect(first.visits.find((v) => v.path === "fan/b/b")?.status).toBe("running");

    hang = false;
    const second = started(first.reopen());
    expect(await executeRun({ workflow: wf, port: second })).toEqual({
      kind: "completed",
      output: { a: "a done", b: "b done" },
    });
    expect(calls).toEqual({ a: 1, b: 2 });
    // b's effect settled before the crash: its retry got the saved result back.
    expect(performed).toEqual(["a", "b"]);
    expect(second.visits.find((v) => v.path === "fan/b/b")).toMatchObject({ visit: 1, attempt: 2 });
    expect(second.visits.find((v) => v.path === "fan")).toMatchObject({
      visit: 1,
      attempt: 2,
      status: "succeeded",
    });
  });

  it("after a crash with the join already decided, saves the unfinished branch cancelled without running it", async () => {
    let bRuns = 0;
    let hang = true;
    const wf = compileWorkflow(
      around(
        parallel({
          branches: {
            a: compute({ run: () => "won" }),
            b: action({
              run: async () => {
                bRuns += 1;
                return hang ? forever() : "late";
              },
            }),
          },
          join: "any",
          concurrency: 2,
        }),
      ),
    );
    // The crash hit between a's finish and the join: simulate it by stopping right after a saved.
    const first = started(new MemoryRunPort({ input: { word: "x" } }));
    const finish = first.finishNodeVisit.bind(first);
    let crashed = false;
    first.finishNodeVisit = async (req) => {
      const saved = await finish(req);
      if (req.path === "fan/a/a") {
        crashed = true;
        return forever();
      }
      return saved;
    };
    await runUntilIdle(executeRun({ workflow: wf, port: first }), 100);
    expect(crashed).toBe(true);
    hang = false;
    const second = started(first.reopen());
    expect(await executeRun({ workflow: wf, port: second })).toEqual({
      kind: "completed",
      output: { a: "won" },
    });
    expect(bRuns).toBe(1);
    expect(second.visits.find((v) => v.path === "fan/b/b")).toMatchObject({
      status: "failed",
      error: { code: "cancelled" },
    });
  });
});
