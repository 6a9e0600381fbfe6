import {
  type ActionContext,
  action,
  type CompiledWorkflow,
  compileWorkflow,
  defineWorkflow,
  type JoinOption,
  map,
  parallel,
  WorkflowError,
  type WorkflowDefinition,
} from "@piw/engine";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { abandonAfter, openRuntime } from "./harness.js";

/**
 * Model-based property test of parallel and map nodes against the real store: random branch shapes, joins,
 * concurrency caps and interleavings (each action waits a generated number of timer turns), with
 * kill-like crashes (everything of an execution freezes where it stands, and a new one resumes the
 * run), pauses (the branches drain, the run parks, and a resume goes on) and cancels at generated points. The model says how the run must end; the saved state must
 * show every settled effect performed at most once, and nothing left open after a terminal end.
 */

const source = { kind: "builtin" as const, id: "parallel-property", revision: "1" };

interface Scenario {
  /** Per branch, per node: whether it fails (after its effect) and how many timer turns it waits. */
  branches: { fails: boolean; waits: number }[][];
  join: JoinOption;
  concurrency: number | undefined;
  /** The last branch is itself a parallel node of two copies of its chain (`x`, `y`), joined all. */
  nested: boolean;
  /**
   * The fork is a map node over the branch numbers instead: one chain workflow whose node `n<i>` acts
   * as branch `input`'s node i (or passes on when that branch is shorter), at `fan/<b>/n<i>`. Its
   * `over` answers `[]` after a crash, so only the saved list can give the model's outcome.
   */
  mapped: boolean;
  /** Action invocations (counted per execution) at which the execution is interrupted. */
  interruptions: {
    at: number;
    kind: "crash-before" | "crash-in-effect" | "crash-after" | "cancel" | "pause";
  }[];
}

const scenarios: fc.Arbitrary<Scenario> = fc
  .array(
    fc.array(fc.record({ fails: fc.nat(4).map((n) => n === 0), waits: fc.nat(3) }), {
      minLength: 1,
      maxLength: 3,
    }),
    { minLength: 1, maxLength: 4 },
  )
  .chain((branches) =>
    fc.record({
      branches: fc.constant(branches),
      join: fc.oneof(
        fc.constant<JoinOption>("all"),
        fc.constant<JoinOption>("any"),
        fc.integer({ min: 1, max: branches.length }).map((k): JoinOption => ({ atLeast: k })),
      ),
      concurrency: fc.option(fc.integer({ min: 1, max: branches.length }), { nil: undefined }),
      nested: fc.boolean(),
      mapped: fc.boolean(),
      interruptions: fc.array(
        fc.record({
          at: fc.integer({ min: 1, max: 8 }),
          kind: fc.constantFrom(
            "crash-before" as const,
            "crash-in-effect" as const,
            "crash-after" as const,
            "cancel" as const,
            "pause" as const,
          ),
        }),
        { maxLength: 2 },
      ),
    }),
  );

function needed(join: JoinOption, total: number): number {
  if (join === "all") return total;
  if (join === "any") return 1;
  return join.atLeast;
}

/** One execution's view of the world: its count of action calls, and whether it froze (a kill). */
interface Epoch {
  /** Which execution of the run this is: 0 the first, then one more per resume. */
  index: number;
  calls: number;
  frozen: boolean;
  interruption: Scenario["interruptions"][number] | undefined;
  onCancel(): void;
  onPause(): void;
}

const forever = () => new Promise<never>(() => {});

type Step = (
  node: Scenario["branches"][number][number],
  scope: string,
  tag: string,
  i: number,
  effects: ActionContext["effects"],
) => Promise<string>;

/** The scenario as a map node over the branch numbers, its branch one chain long enough for each. */
function mappedWorkflow(s: Scenario, epoch: Epoch, step: Step): WorkflowDefinition {
  const names = Array.from({ length: Math.max(...s.branches.map((b) => b.length)) }, (_, i) => `n${i}`);
  const chain = defineWorkflow({
    name: "chain",
    startAt: "n0",
    nodes: Object.fromEntries(
      names.map((name, i) => [
        name,
        action({
          run: ({ input, outputs, effects }: ActionContext<number>) => {
            const node = s.branches[input]?.[i];
            return node === undefined
              ? outputs[`n${i - 1}`]
              : step(node, `fan/${input}`, `b${input}`, i, effects);
          },
        }),
      ]),
    ),
    edges: Object.fromEntries(names.map((name, i) => [name, { to: names[i + 1] ?? "done" }])),
  } as never) as WorkflowDefinition;
  return defineWorkflow({
    name: "property",
    startAt: "fan",
    maxSteps: 100_000,
    nodes: {
      fan: map({
        // After a crash only the saved list gives the model's outcome.
        over: () => (epoch.index === 0 ? s.branches.map((_, b) => b) : []),
        branch: chain,
        join: s.join,
        ...(s.concurrency === undefined ? {} : { concurrency: s.concurrency }),
      }),
    },
    edges: { fan: { to: "done" } },
  });
}

/** The workflow, compiled against one execution's epoch (its closures), with the same digest each time. */
function workflowFor(
  s: Scenario,
  epoch: Epoch,
  performed: Map<string, number>,
  finishedBefore: (path: string) => boolean = () => false,
): CompiledWorkflow {
  const hangIf = async (when: Scenario["interruptions"][number]["kind"], call: number) => {
    if (epoch.frozen) return forever();
    if (epoch.interruption?.at === call && epoch.interruption.kind === when) {
      epoch.frozen = true;
      return forever();
    }
  };
  /** The work of node i of a branch: waits, one effect, maybe a failure; interrupted where planned. */
  const step: Step = async (
    node: Scenario["branches"][number][number],
    scope: string,
    tag: string,
    i: number,
    effects: ActionContext["effects"],
  ) => {
    const call = ++epoch.calls;
    // A crash re-runs only what had not finished: never a visit the store holds as finished.
    if (finishedBefore(`${scope}/n${i}`)) throw new Error(`${scope}/n${i} ran again after it finished`);
    if (epoch.interruption?.at === call && epoch.interruption.kind === "cancel") epoch.onCancel();
    if (epoch.interruption?.at === call && epoch.interruption.kind === "pause") epoch.onPause();
    for (let t = 0; t < node.waits; t += 1) await new Promise((r) => setTimeout(r, 1));
    await hangIf("crash-before", call);
    const key = `${tag}/n${i}`;
    const value = await effects.idempotent("note", { key }, async () => {
      await hangIf("crash-in-effect", call);
      performed.set(key, (performed.get(key) ?? 0) + 1);
      return key;
    });
    await hangIf("crash-after", call);
    if (node.fails) throw new WorkflowError(`${key} failed`);
    return value;
  };
  const chainOf = (nodes: Scenario["branches"][number], scope: string, tag: string): WorkflowDefinition => {
    const names = nodes.map((_, i) => `n${i}`);
    return defineWorkflow({
      name: `chain-${tag}`,
      startAt: "n0",
      nodes: Object.fromEntries(
        nodes.map((node, i) => [
          `n${i}`,
          action({ run: ({ effects }: ActionContext) => step(node, scope, tag, i, effects) }),
        ]),
      ),
      edges: Object.fromEntries(names.map((name, i) => [name, { to: names[i + 1] ?? "done" }])),
    } as never) as WorkflowDefinition;
  };
  if (s.mapped) return compileWorkflow(mappedWorkflow(s, epoch, step));
  const branchOf = (nodes: Scenario["branches"][number], b: number) => {
    if (!(s.nested && b === s.branches.length - 1)) return chainOf(nodes, `fan/b${b}`, `b${b}`);
    const inner = (twin: string) => chainOf(nodes, `fan/b${b}/b${b}/${twin}`, `b${b}${twin}`);
    return parallel({ branches: { x: inner("x"), y: inner("y") }, join: "all" });
  };
  const branches = Object.fromEntries(s.branches.map((nodes, b) => [`b${b}`, branchOf(nodes, b)]));
  return compileWorkflow(
    defineWorkflow({
      name: "property",
      startAt: "fan",
      maxSteps: 100_000,
      nodes: {
        fan: parallel({
          branches,
          join: s.join,
          ...(s.concurrency === undefined ? {} : { concurrency: s.concurrency }),
        }),
      },
      edges: { fan: { to: "done" } },
    }),
  );
}

async function check(s: Scenario): Promise<void> {
  const h = openRuntime();
  try {
    const performed = new Map<string, number>();
    const runId = h.runtime.reserve({
      workflow: workflowFor(s, newEpoch(s, 0, noCancel), performed),
      source,
      input: null,
    });
    let activation = h.runtime.activate(runId);
    const finished = (path: string) =>
      h.store.listRunSteps(runId).some((step) => step.path === path && step.status !== "running");
    let outcome: Awaited<ReturnType<typeof h.runtime.execute>> | undefined;
    let cancelled = false;
    const pause = () => {
      // A pause may come after the run's last boundary, or twice: then there is nothing to change.
      const asked = h.store.requestPause({ runId }).kind;
      expect(["applied", "adopted", "conflict"]).toContain(asked);
    };
    for (let e = 0; e <= s.interruptions.length; e += 1) {
      const controller = new AbortController();
      const cancel = () => {
        cancelled = true;
        expect(h.store.cancelRun({ runId }).kind).toBe("applied");
        controller.abort();
      };
      const epoch = newEpoch(s, e, cancel, pause);
      const running = h.runtime.execute(
        activation,
        workflowFor(s, epoch, performed, finished),
        controller.signal,
      );
      const ended = await Promise.race([running, frozen(epoch, running)]);
      if (!epoch.frozen && ended?.kind === "parked" && ended.reason === "paused") {
        // Paused: every branch came to rest, nothing is left running; a resume goes on.
        expect(h.store.getRun(runId)).toMatchObject({ status: "parked", paused: true });
        activation = h.runtime.activate(runId, { resume: true });
        continue;
      }
      if (!epoch.frozen) {
        outcome = ended;
        break;
      }
      // A killed worker does nothing more: let what was already under way come to rest.
      await abandonAfter(running, 100);
      // A kill: the host parks the run with the worker lost, and a new worker resumes it.
      const parked = h.store.parkRun(activation.port.fence, {
        code: "worker_lost",
        message: "killed",
        launchId: `l${e}`,
      });
      expect(parked.kind).toBe("applied");
      activation = h.runtime.activate(runId);
    }
    if (outcome === undefined) {
      // Every planned interruption hit: the last resume runs with none left.
      for (let more = 0; outcome === undefined || isPaused(outcome); more += 1) {
        // A pause asked for before a crash still holds after it: that execution parks, and one more resumes.
        expect(more).toBeLessThan(3);
        if (outcome !== undefined) activation = h.runtime.activate(runId, { resume: true });
        const epoch = newEpoch(s, s.interruptions.length + 1 + more, noCancel);
        outcome = await h.runtime.execute(activation, workflowFor(s, epoch, performed, finished));
      }
    }

    // No settled effect was ever performed twice, however often the run crashed.
    for (const [key, count] of performed) expect(count, key).toBe(1);

    const run = h.store.getRun(runId);
    if (cancelled) {
      expect(run?.status).toBe("cancelled");
      return;
    }
    const healthy = s.branches.filter((nodes) => nodes.every((n) => !n.fails)).length;
    const need = needed(s.join, s.branches.length);
    const steps = h.store.listRunSteps(runId);
    expect(steps.filter((step) => step.status === "running")).toEqual([]);
    if (healthy >= need && s.mapped) {
      expect(outcome).toMatchObject({ kind: "completed" });
      // In item order; a branch that failed or was cancelled gives null.
      const output = (outcome as { output: (string | null)[] }).output;
      expect(output).toHaveLength(s.branches.length);
      expect(output.filter((entry) => entry !== null).length).toBeGreaterThanOrEqual(need);
      output.forEach((entry, b) => {
        if (entry === null) return;
        expect(s.branches[b]?.every((n) => !n.fails)).toBe(true);
        expect(entry).toBe(`b${b}/n${(s.branches[b]?.length ?? 0) - 1}`);
      });
    } else if (healthy >= need) {
      expect(outcome).toMatchObject({ kind: "completed" });
      const output = (outcome as { output: Record<string, string> }).output;
      const keys = Object.keys(output);
      expect(keys.length).toBeGreaterThanOrEqual(need);
      for (const key of keys) {
        const b = Number(key.slice(1));
        expect(s.branches[b]?.every((n) => !n.fails)).toBe(true);
        const last = `n${(s.branches[b]?.length ?? 0) - 1}`;
        const nested = s.nested && b === s.branches.length - 1;
        expect(output[key]).toEqual(nested ? { x: `b${b}x/${last}`, y: `b${b}y/${last}` } : `b${b}/${last}`);
      }
    } else {
      expect(outcome).toMatchObject({ kind: "failed" });
      expect((outcome as { error: { message: string } }).error.message).toMatch(
        s.mapped ? /^Branch \d+ of fan failed: / : /^Branch b\d+ of fan failed: /,
      );
    }
    // Each path's visits are numbered from 1 without gaps, and a visit's attempts only grow on crashes.
    for (const step of steps) expect(step.visit).toBe(1);
  } finally {
    h.cleanup();
  }
}

/** Resolves once the epoch froze; gives up (never resolving) once the execution ended. */
function frozen(epoch: Epoch, running: Promise<unknown>): Promise<undefined> {
  let done = false;
  running.then(
    () => {
      done = true;
    },
    () => {
      done = true;
    },
  );
  return new Promise((resolve) => {
    const poll = () => {
      if (epoch.frozen) resolve(undefined);
      else if (!done) setTimeout(poll, 5);
    };
    poll();
  });
}

function newEpoch(s: Scenario, e: number, onCancel: () => void, onPause = () => {}): Epoch {
  return { index: e, calls: 0, frozen: false, interruption: s.interruptions[e], onCancel, onPause };
}

const noCancel = () => {};

function isPaused(outcome: { kind: string; reason?: string }): boolean {
  return outcome.kind === "parked" && outcome.reason === "paused";
}

/** Scenarios that once failed, run first every time. */
const found: [Scenario][] = [
  // A nested fork rested for a pause when the outer join failed: its own visit was left open.
  [
    {
      branches: [
        [
          { fails: false, waits: 0 },
          { fails: false, waits: 2 },
          { fails: false, waits: 0 },
        ],
        [
          { fails: true, waits: 1 },
          { fails: false, waits: 0 },
        ],
        [
          { fails: true, waits: 0 },
          { fails: true, waits: 0 },
        ],
        [
          { fails: false, waits: 1 },
          { fails: true, waits: 1 },
        ],
      ],
      join: { atLeast: 3 },
      concurrency: undefined,
      nested: true,
      mapped: false,
      interruptions: [{ at: 1, kind: "pause" }],
    },
  ],
  // A branch ended while the fork's loop awaited, with another branch resting for a pause: the loop
  // waited for the resting one only, and the run never ended (seed 4242).
  [
    {
      branches: [
        [
          { fails: false, waits: 0 },
          { fails: false, waits: 0 },
        ],
        [{ fails: false, waits: 0 }],
        [
          { fails: true, waits: 2 },
          { fails: true, waits: 0 },
          { fails: false, waits: 2 },
        ],
        [
          { fails: false, waits: 3 },
          { fails: false, waits: 2 },
        ],
      ],
      join: { atLeast: 1 },
      concurrency: 2,
      nested: false,
      mapped: false,
      interruptions: [{ at: 1, kind: "pause" }],
    },
  ],
];

describe("parallel and map nodes: model-based, against the real store", () => {
  it(
    "end as the model says, through random interleavings, crashes and cancels, without repeating a settled effect",
    async () => {
      // A fixed seed keeps CI reproducible; PIW_PROPERTY_SEED (and PIW_PROPERTY_RUNS) explore others. A
      // scenario that does not end within 10 s fails as a hang, with its counterexample.
      const seed = Number(process.env.PIW_PROPERTY_SEED ?? 1_512);
      const numRuns = Number(process.env.PIW_PROPERTY_RUNS ?? 40);
      await fc.assert(fc.asyncProperty(scenarios, check), {
        numRuns,
        seed,
        examples: found,
        timeout: 10_000,
      });
    },
    Number(process.env.PIW_PROPERTY_TIMEOUT_MS ?? 300_000),
  );
});
