import { compileWorkflow, compute, defineWorkflow, type MemoryRunPort, parallel } from "../src/index.js";

// What the executor tests share: a run port as a worker holds it once the run is running, a way to
// stop a run at an exact point the way a killed worker would, and how a visit ended.

/** The port of a run the host has marked running (the state every command executes in). */
export function started(port: MemoryRunPort): MemoryRunPort {
  port.status = "running";
  return port;
}

/** Lets the test stop a node at an exact point, the way a killed worker would stop. */
export function forever(): Promise<never> {
  return new Promise(() => {});
}

/** The hung node never settles: give the executor `ms` to reach it, then abandon it like a dead process. */
export async function runUntilIdle(promise: Promise<unknown>, ms = 50): Promise<void> {
  await Promise.race([promise, new Promise((resolve) => setTimeout(resolve, ms))]);
}

/** The saved status and error code of the first visit of `path`, if it was visited. */
export function visitStatus(port: MemoryRunPort, path: string) {
  const visit = port.visits.find((v) => v.path === path);
  return visit && { status: visit.status, code: visit.error?.code ?? null };
}

/** Three branches one at a time under `maxSteps: 3`: the run fails before the third branch starts. */
export function boundedFork() {
  return compileWorkflow(
    defineWorkflow({
      name: "bounded",
      maxSteps: 3,
      startAt: "fan",
      nodes: {
        fan: parallel({
          branches: {
            a: compute({ run: () => 1 }),
            b: compute({ run: () => 2 }),
            c: compute({ run: () => 3 }),
          },
          join: "all",
          concurrency: 1,
        }),
      },
      edges: { fan: { to: "done" } },
    }),
  );
}
