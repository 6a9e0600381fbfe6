import { describe, expect, it } from "vitest";
import * as engine from "../src/index.js";
import {
  type ActionContext,
  action,
  compileWorkflow,
  compute,
  decision,
  decisionEdge,
  defineWorkflow,
  executeRun,
  includeWorkflow,
  MemoryRunPort,
} from "../src/index.js";
import { forever, runUntilIdle, started } from "./memory-run.js";

describe("who may construct identities", () => {
  it("exports no identity constructor from the public entry, only the branded types", () => {
    const exported = Object.keys(engine);
    // A real export is listed, so the absence below means something.
    expect(exported).toContain("executeRun");
    for (const name of ["nodeVisitId", "effectId", "visitMessageId"]) {
      expect(exported).not.toContain(name);
    }
  });
});

describe("effect identity follows the node visit", () => {
  it("gives an action a new effect identity on its second loop visit and keeps the first one", async () => {
    const seen: string[][] = [];
    let calls = 0;
    const port = started(new MemoryRunPort({ runId: "loop-run" }));
    const wf = compileWorkflow(
      defineWorkflow({
        name: "loop",
        startAt: "deploy",
        maxSteps: 10,
        nodes: {
          deploy: action({
            // The same type and the same request on every visit: only the visit number tells them apart.
            run: async ({ effects }: ActionContext) => {
              const out = await effects.idempotent("deploy", { target: "prod" }, () => {
                calls += 1;
                return { deployed: calls };
              });
              seen.push([...port.effects.keys()]);
              return out;
            },
          }),
          again: decision({
            choices: ["again", "stop"],
            decide: ({ outputs }) =>
              (outputs.deploy as { deployed: number }).deployed < 2 ? "again" : "stop",
          }),
        },
        edges: { deploy: { to: "again" }, again: decisionEdge({ again: "deploy", stop: "done" }) },
      }),
    );

    expect(await executeRun({ workflow: wf, port })).toEqual({ kind: "completed", output: "stop" });
    const first = "loop-run/deploy#1/deploy/0";
    const second = "loop-run/deploy#2/deploy/0";
    expect(seen).toEqual([[first], [first, second]]);
    expect(calls).toBe(2);
    expect(port.visits.filter((v) => v.path === "deploy").map((v) => [v.visit, v.attempt])).toEqual([
      [1, 1],
      [2, 1],
    ]);
    // The first visit's effect is untouched by the second: same identity, same saved result.
    expect(port.effects.get(first)?.state).toEqual({
      status: "settled",
      effectId: first,
      result: { ok: true, value: { deployed: 1 } },
    });
    expect(port.effects.get(second)?.state).toEqual({
      status: "settled",
      effectId: second,
      result: { ok: true, value: { deployed: 2 } },
    });
  });

  it("reproduces the exact effect identities when a crash retry runs the unfinished visit again", async () => {
    const performed: string[] = [];
    let hang = true;
    const wf = compileWorkflow(
      defineWorkflow({
        name: "retry",
        startAt: "release",
        nodes: {
          release: action({
            run: async ({ effects }: ActionContext) => {
              const tag = await effects.idempotent("tag", { version: "1.2.0" }, () => {
                performed.push("tag");
                return "v1.2.0";
              });
              return effects.idempotent("publish", { tag }, () => {
                performed.push("publish");
                return hang ? forever() : { published: tag };
              });
            },
          }),
        },
        edges: { release: { to: "done" } },
      }),
    );

    const first = started(new MemoryRunPort({ runId: "retry-run" }));
    await runUntilIdle(executeRun({ workflow: wf, port: first }));
    const before = [...first.effects.keys()];
    expect(before).toEqual(["retry-run/release#1/tag/0", "retry-run/release#1/publish/1"]);
    expect(first.effects.get("retry-run/release#1/publish/1")?.state.status).toBe("reserved");

    // A fresh worker sees only the saved state; the visit is retried with the same number.
    hang = false;
    const second = started(first.reopen());
    expect(await executeRun({ workflow: wf, port: second })).toEqual({
      kind: "completed",
      output: { published: "v1.2.0" },
    });
    expect([...second.effects.keys()]).toEqual(before);
    expect(second.visits).toMatchObject([{ path: "release", visit: 1, attempt: 2, status: "succeeded" }]);
    // The settled effect was adopted, the interrupted one performed again under its old identity.
    expect(performed).toEqual(["tag", "publish", "publish"]);
    expect(second.effects.get("retry-run/release#1/publish/1")?.state).toMatchObject({ status: "settled" });
  });
});

describe("an included workflow entered again by a loop", () => {
  /** A child that performs one effect per entry, then tells whether it can see its own earlier output. */
  const looping = (hang: () => boolean, results: unknown[] = []) =>
    compileWorkflow(
      defineWorkflow({
        name: "looping",
        startAt: "repair",
        maxSteps: 20,
        includes: {
          repair: includeWorkflow(
            defineWorkflow({
              name: "child",
              startAt: "work",
              nodes: {
                work: action({
                  run: ({ effects, node }: ActionContext) =>
                    node.visit === 2 && hang()
                      ? forever()
                      : effects.idempotent("work", { same: true }, () => ({ visit: node.visit })),
                }),
                seen: compute({
                  run: ({ outputs, node }) => ({ stale: outputs.seen !== undefined, entry: node.visit }),
                }),
              },
              edges: { work: { to: "seen" }, seen: { to: "done" } },
            }),
          ),
        },
        nodes: {
          again: decision({
            choices: ["again", "stop"],
            decide: ({ node, outputs }) => {
              results.push(outputs.repair);
              return node.visit < 2 ? "again" : "stop";
            },
          }),
        },
        edges: { "repair.done": { to: "again" }, again: decisionEdge({ again: "repair", stop: "done" }) },
      }),
    );
  const seenOf = (port: MemoryRunPort) =>
    port.visits.filter((v) => v.path === "repair/seen").map((v) => [v.visit, v.output]);

  it("gives the second entry fresh visits and effect identities, and none of the first entry's outputs", async () => {
    const port = started(new MemoryRunPort({ runId: "mount-run" }));
    const results: unknown[] = [];
    expect(await executeRun({ workflow: looping(() => false, results), port })).toEqual({
      kind: "completed",
      output: "stop",
    });
    expect([...port.effects.keys()]).toEqual([
      "mount-run/repair/work#1/work/0",
      "mount-run/repair/work#2/work/0",
    ]);
    expect(seenOf(port)).toEqual([
      [1, { stale: false, entry: 1 }],
      [2, { stale: false, entry: 2 }],
    ]);
    // The parent reads each entry's result, the output its exit was taken with, under the mount's name.
    expect(results).toEqual([
      { stale: false, entry: 1 },
      { stale: false, entry: 2 },
    ]);
  });

  it("starts the second entry clean after a crash in it too: the rebuilt position forgets the first entry", async () => {
    let hang = true;
    const workflow = looping(() => hang);
    const first = started(new MemoryRunPort({ runId: "mount-crash" }));
    await runUntilIdle(executeRun({ workflow, port: first }));
    expect(first.visits.at(-1)).toMatchObject({ path: "repair/work", visit: 2, status: "running" });
    hang = false;
    const second = started(first.reopen());
    expect(await executeRun({ workflow, port: second })).toMatchObject({ kind: "completed" });
    expect(seenOf(second)).toEqual([
      [1, { stale: false, entry: 1 }],
      [2, { stale: false, entry: 2 }],
    ]);
  });
});
