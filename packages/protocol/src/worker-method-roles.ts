import type { z } from "zod";
import type { WorkerResult, workerMethods } from "./worker-methods.js";

type WorkerMethod = keyof typeof workerMethods;
export type WorkerParams<M extends WorkerMethod> = z.infer<(typeof workerMethods)[M]["params"]>;

/**
 * What each worker method is to the engine's run port, so the port's type follows the method table:
 * - `write`: one fenced durable write, the port method `port` (same params, the host's Transition);
 * - `live`: the port's fire-and-forget `port`, never awaited by the executor;
 * - `agent`: how the port's agent events travel (`agent.next` polls, `agent.verdict` answers);
 * - `worker`: the worker process's own business, not a run port's (its hello, exit, process groups,
 *   an isolated agent's live progress).
 * A worker method added without a role here does not compile, nor does a role for no method.
 */
const workerMethodRoles = {
  "worker.hello": { role: "worker" },
  "run.markRunning": { role: "write", port: "markRunning" },
  "visit.start": { role: "write", port: "startNodeVisit" },
  "visit.finish": { role: "write", port: "finishNodeVisit" },
  "visit.advance": { role: "write", port: "advanceNodeVisit" },
  "effect.reserve": { role: "write", port: "reserveEffect" },
  "effect.settle": { role: "write", port: "settleEffect" },
  "message.enqueue": { role: "write", port: "enqueueMessage" },
  "run.finish": { role: "write", port: "finishRun" },
  "run.park": { role: "write", port: "parkRun" },
  "visit.schedule": { role: "write", port: "scheduleVisit" },
  "run.redefine": { role: "write", port: "redefineRun" },
  "budget.check": { role: "write", port: "checkBudget" },
  "agent.next": { role: "agent" },
  "agent.verdict": { role: "agent" },
  "agent.progress": { role: "worker" },
  "agent.live": { role: "worker" },
  "node.progress": { role: "live", port: "reportProgress" },
  "worker.processGroup": { role: "worker" },
  "worker.exit": { role: "worker" },
} as const satisfies {
  [M in WorkerMethod]: { role: "write" | "live"; port: string } | { role: "agent" | "worker" };
};

type Roles = typeof workerMethodRoles;

/** The worker methods that are the run port's durable writes. */
export type WorkerWrite = {
  [M in WorkerMethod]: Roles[M] extends { role: "write" } ? M : never;
}[WorkerMethod];

/**
 * The run port's durable writes, each typed by its worker method: the params the host parses (none
 * when they may be left out) and the Transition it replies with.
 */
export type RunPortWrites = {
  [M in WorkerWrite as Roles[M] extends { port: infer P extends string } ? P : never]: (
    ...params: undefined extends WorkerParams<M> ? [] : [WorkerParams<M>]
  ) => Promise<WorkerResult<M>>;
};

/** The worker methods that are one durable write each, in table order. */
export const WORKER_WRITES: readonly WorkerWrite[] = (
  Object.keys(workerMethodRoles) as WorkerMethod[]
).filter((method): method is WorkerWrite => workerMethodRoles[method].role === "write");
