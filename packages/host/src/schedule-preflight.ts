import { randomUUID } from "node:crypto";
import {
  type JsonValue,
  type PreflightLaunch,
  preflightReplySchema,
  reusablePreflightSources,
  type SafeError,
  safeError,
} from "@piw/protocol";
import { askPreflightCached } from "@piw/state-dir";

/** A firing's preflight: the prepared launch, or why the workflow could not start (safe to show). */
type FiringPreflight = { ok: true; launch: PreflightLaunch } | { ok: false; error: SafeError };

interface FiringPreflightRequest {
  workflowRef: string;
  workingDir: string;
  task: string | null;
  input: JsonValue | null;
}

export type PreflightRunner = (request: FiringPreflightRequest) => Promise<FiringPreflight>;

const refused = (code: SafeError["code"], message: string): FiringPreflight => ({
  ok: false,
  error: safeError(code, message),
});

/**
 * The host never loads workflow code: a firing's workflow resolves, compiles and checks its input in the
 * same short-lived preflight child the CLI uses (its own process group, killed on the time limit), and
 * only its typed reply comes back (`askIpcChild`). Runs without a Pi session: agent steps run isolated.
 * A firing of an unchanged workflow file reuses the launch prepared for the last one (`askPreflightCached`).
 */
export function preflightRunner(
  command: readonly string[],
  timeoutMs: number,
  env: NodeJS.ProcessEnv,
  stateDir?: string,
): PreflightRunner {
  return async (request) => {
    const requestId = randomUUID();
    const outcome = await askPreflightCached({
      stateDir,
      sourcesOf: reusablePreflightSources,
      command,
      cwd: request.workingDir,
      env,
      timeoutMs,
      request: {
        type: "launch",
        requestId,
        ref: request.workflowRef,
        cwd: request.workingDir,
        ...(request.task === null ? {} : { task: request.task }),
        ...(request.input === null ? {} : { input: request.input }),
        // Agent steps are allowed: a scheduled run's default-session steps run isolated (its origin).
        piSession: true,
        timeoutMs,
      },
      answers: (raw) =>
        typeof raw === "object" && raw !== null && (raw as { requestId?: unknown }).requestId === requestId,
    });
    switch (outcome.kind) {
      case "replied":
        return fromReply(outcome.message);
      case "exited":
        return refused("workflow_exited_at_load", "the workflow ended its preflight process");
      case "timed_out":
        return refused("workflow_load_timeout", `the workflow did not load within ${timeoutMs} ms`);
      case "spawn_failed":
        return refused("preflight_failed", "cannot start the preflight process");
      default:
        return outcome satisfies never;
    }
  };
}

function fromReply(raw: unknown): FiringPreflight {
  const reply = preflightReplySchema.safeParse(raw);
  if (!reply.success)
    return refused("preflight_failed", "the preflight process sent a reply this piw cannot read");
  const data = reply.data;
  switch (data.type) {
    case "launch.prepared":
      return { ok: true, launch: data.launch };
    case "refused":
      return refused(data.refusal.code, data.refusal.message);
    case "crashed":
      return refused("workflow_crashed_at_load", "the workflow crashed while it loaded");
    case "described":
    case "builtins.described":
      return refused("preflight_failed", "the preflight process answered another request");
    default:
      return data satisfies never;
  }
}
