import { ACTIVE_STATUSES, isActiveStatus, type RunStatus, type RunSummary } from "@piw/protocol";
import { WorkflowError } from "./host-link.js";
import type { SessionBridge } from "./session-bridge.js";

/** The verbs that act on the session's current run when no run ID is given. */
export type CurrentRunVerb = "status" | "pause" | "resume" | "cancel";

const ACTIVE: RunStatus[] = [...ACTIVE_STATUSES];

/** What each verb takes as "current" and what the reply says when there is none. */
const WANTED: Readonly<Record<CurrentRunVerb, { statuses?: RunStatus[]; missing: string }>> = {
  status: { missing: "has no workflow runs" },
  pause: { statuses: ACTIVE, missing: "has no active workflow run to pause" },
  cancel: { statuses: ACTIVE, missing: "has no active workflow run to cancel" },
  resume: { statuses: ["parked"], missing: "has no parked workflow run to resume" },
};

/**
 * The run a verb without a run ID acts on, from this session's runs, newest first: the one active
 * run (a session holds at most one); for `status`, else the latest run; for `resume`, the latest
 * parked run. None is a WorkflowError naming what is missing and how to give an ID.
 */
export function chooseCurrentRun(verb: CurrentRunVerb, runs: readonly RunSummary[]): string {
  const active = runs.find((run) => isActiveStatus(run.status));
  const chosen =
    verb === "resume"
      ? runs.find((run) => run.status === "parked")
      : verb === "status"
        ? (active ?? runs[0])
        : active;
  if (chosen === undefined) {
    throw new WorkflowError(
      `This Pi session ${WANTED[verb].missing}; nothing was done. Give the run's ID: /workflow ${verb} <runId> (/workflow list shows the run IDs).`,
    );
  }
  return chosen.runId;
}

/** The session's current run for `verb`, read from the host (one call per command, not per key). */
export async function currentRunId(bridge: SessionBridge, verb: CurrentRunVerb): Promise<string> {
  const sessionId = bridge.sessionId;
  const { statuses } = WANTED[verb];
  const active =
    verb === "status" ? await bridge.host.call("runs.list", { sessionId, statuses: ACTIVE, limit: 1 }) : [];
  const runs = await bridge.host.call("runs.list", {
    sessionId,
    limit: 1,
    ...(statuses ? { statuses } : {}),
  });
  return chooseCurrentRun(verb, [...active, ...runs]);
}
