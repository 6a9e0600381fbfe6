/** The soak's settings, read once from its environment (defaults in `soak.ts`'s header). */
export interface SoakSettings {
  seed: number;
  seconds: number;
  concurrency: number;
  /** The chain workflow's node count. */
  nodes: number;
  /** How many pure steps (computes, decisions) each compute slot of the chain workflow runs in a row. */
  pure: number;
  killMinMs: number;
  killMaxMs: number;
  workflows: string[];
  /** The share of the schedule's events that cancel a run of the parallel or map workflow mid-flight. */
  cancelShare: number;
  /** The deadline of every shell and action node of the workflows. */
  deadlineMs: number;
  /** How long a run parked for a person stays parked before the soak resumes it: past the deadline. */
  parkHoldMs: number;
}

function envInt(name: string, fallback: number, min: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === "") return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min) throw new Error(`${name} must be an integer >= ${min}`);
  return value;
}

/** Throws on a bad setting, before the soak makes anything. */
export function readSettings(): SoakSettings {
  const seed = envInt("SOAK_SEED", 1, 0);
  const seconds = envInt("SOAK_SECONDS", 180, 1);
  const concurrency = envInt("SOAK_CONCURRENCY", 4, 1);
  const nodes = envInt("SOAK_NODES", 12, 3);
  const pure = envInt("SOAK_PURE", 40, 1);
  const killMinMs = envInt("SOAK_KILL_MIN_MS", 250, 10);
  const killMaxMs = envInt("SOAK_KILL_MAX_MS", 1500, killMinMs);
  const workflows = (process.env.SOAK_WORKFLOWS ?? "chain,parallel,map").split(",").filter(Boolean);
  if (workflows.length === 0 || workflows.some((w) => !["chain", "parallel", "map"].includes(w))) {
    throw new Error("SOAK_WORKFLOWS must list some of chain, parallel and map, comma-separated");
  }
  const forking = workflows.includes("parallel") || workflows.includes("map");
  const cancelShare = forking ? envInt("SOAK_CANCEL_PERCENT", 5, 0) / 100 : 0;
  const deadlineMs = envInt("SOAK_DEADLINE_MS", 4_000, 100);
  const parkHoldMs = envInt("SOAK_PARK_HOLD_MS", deadlineMs + 1_000, 0);
  return {
    seed,
    seconds,
    concurrency,
    nodes,
    pure,
    killMinMs,
    killMaxMs,
    workflows,
    cancelShare,
    deadlineMs,
    parkHoldMs,
  };
}
