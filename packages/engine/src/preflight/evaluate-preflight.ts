import { randomUUID } from "node:crypto";
import {
  type JsonValue,
  type PreflightLaunch,
  type PreflightReply,
  type PreflightRequest,
  quickPreparedLaunch,
} from "@piw/protocol";
import { askPreflightCached, PIW_ENV, readPiwEnv } from "@piw/state-dir";
import { LaunchRefused } from "../launch/launch-refused.js";

/** How long a workflow file may take to load, compile and check its input before it is stopped. */
export const DEFAULT_PREFLIGHT_TIMEOUT_MS = 10_000;

export interface PreflightOptions {
  /** argv that starts the preflight child: the worker app's `dist/preflight.js` (or its source). */
  command: readonly string[];
  timeoutMs?: number | undefined;
  /** The child's environment; default this process's. */
  env?: NodeJS.ProcessEnv | undefined;
  /** The entry file of the running Pi's SDK (the extension's), for the child's model check. */
  piSdkEntry?: string | undefined;
  /** The state directory whose launch cache may answer for an unchanged workflow file; none: no cache. */
  stateDir?: string | undefined;
}

/** How one preflight child ended, as seen from outside it. */
export type PreflightOutcome =
  | { kind: "replied"; reply: PreflightReply; cached?: true }
  | { kind: "exited"; exitCode: number | null; signal: NodeJS.Signals | null }
  | { kind: "timed_out"; timeoutMs: number }
  | { kind: "reply_invalid" }
  | { kind: "spawn_failed"; reason: string };

// The reply's schemas are built only for a child's reply: a launch the cache answers is checked without
// zod (`quickPreparedLaunch`), which spares `piw run` of an unchanged file their construction.
const replySchemas = () => import("./preflight-reply-schemas.js");

/** Is `raw` a message that claims to answer this request (as opposed to the workflow's own `process.send`)? */
function claimsRequest(raw: unknown, requestId: string): boolean {
  return typeof raw === "object" && raw !== null && (raw as { requestId?: unknown }).requestId === requestId;
}

/**
 * Evaluate one preflight request in a short-lived child process, never in this one: workflow code that
 * exits, crashes or loops at import ends or stalls only the child, whose group is killed when the
 * outcome is known or the time limit passes (`askIpcChild`). Never throws.
 */
export async function evaluatePreflight(
  request: PreflightRequest,
  options: PreflightOptions,
): Promise<PreflightOutcome> {
  const outcome = await askPreflightCached({
    command: options.command,
    cwd: request.cwd,
    env: options.env ?? process.env,
    timeoutMs: options.timeoutMs ?? DEFAULT_PREFLIGHT_TIMEOUT_MS,
    request,
    answers: (raw) => claimsRequest(raw, request.requestId),
    stateDir: options.stateDir,
    sourcesOf: async (raw) => (await replySchemas()).reusablePreflightSources(raw),
  });
  if (outcome.kind !== "replied") return outcome;
  const quick = outcome.cached ? quickPreparedLaunch(outcome.message) : undefined;
  if (quick !== undefined) return { kind: "replied", reply: quick, cached: true };
  const reply = (await replySchemas()).preflightReplySchema.safeParse(outcome.message);
  if (!reply.success) return { kind: "reply_invalid" };
  return outcome.cached
    ? { kind: "replied", reply: reply.data, cached: true }
    : { kind: "replied", reply: reply.data };
}

/** The refusal for an outcome without a reply; `what` names the workflow (`workflow hello`). */
export function refusalFor(
  outcome: Exclude<PreflightOutcome, { kind: "replied" }>,
  what: string,
): LaunchRefused {
  switch (outcome.kind) {
    case "exited": {
      const how = outcome.signal === null ? `exit code ${outcome.exitCode}` : `signal ${outcome.signal}`;
      return new LaunchRefused(
        "workflow_exited_at_load",
        `${what} ended the process that loads it (${how}) before it finished loading: ` +
          "a workflow file must not exit at import",
        [],
        false,
      );
    }
    case "timed_out":
      return new LaunchRefused(
        "workflow_load_timeout",
        `${what} did not finish loading within ${outcome.timeoutMs} ms and was stopped: ` +
          "its code may loop or wait at import",
        [],
        false,
      );
    case "reply_invalid":
      return new LaunchRefused(
        "preflight_failed",
        `the preflight of ${what} sent a reply this piw cannot read: reinstall piw`,
        [],
        false,
      );
    case "spawn_failed":
      return new LaunchRefused(
        "preflight_failed",
        `cannot start the process that loads ${what} (${outcome.reason}): reinstall piw`,
        [],
        false,
      );
    default:
      return outcome satisfies never;
  }
}

export function crashed(what: string): LaunchRefused {
  return new LaunchRefused(
    "workflow_crashed_at_load",
    `${what} crashed while loading (its code threw outside the import, e.g. in a timer)`,
    [],
    false,
  );
}

export interface LaunchPreflight {
  ref: string;
  cwd: string;
  task?: string | undefined;
  input?: JsonValue | undefined;
  /** False for a run without a Pi session (the CLI): a workflow with agent steps is refused. */
  piSession: boolean;
}

/**
 * Launch preflight of a start, in a child process: the workflow resolves and compiles, and the input
 * matches its schema. Returns what `runs.reserve` needs; throws `LaunchRefused` for every failure,
 * including a workflow that exits, crashes or hangs while it loads.
 */
export async function preflightLaunch(
  launch: LaunchPreflight,
  options: PreflightOptions,
): Promise<PreflightLaunch> {
  const what = `workflow ${launch.ref}`;
  const outcome = await evaluatePreflight(
    {
      type: "launch",
      requestId: randomUUID(),
      ref: launch.ref,
      cwd: launch.cwd,
      ...(launch.task === undefined ? {} : { task: launch.task }),
      ...(launch.input === undefined ? {} : { input: launch.input }),
      piSession: launch.piSession,
      ...(options.piSdkEntry === undefined ? {} : { piSdkEntry: options.piSdkEntry }),
      timeoutMs: options.timeoutMs ?? DEFAULT_PREFLIGHT_TIMEOUT_MS,
    },
    options,
  );
  if (outcome.kind !== "replied") throw refusalFor(outcome, what);
  const { reply } = outcome;
  switch (reply.type) {
    case "launch.prepared":
      return reply.launch;
    case "described":
    case "builtins.described":
      throw refusalFor({ kind: "reply_invalid" }, what);
    case "refused":
      throw new LaunchRefused(
        reply.refusal.code,
        reply.refusal.message,
        reply.refusal.problems,
        reply.refusal.usage,
      );
    case "crashed":
      throw crashed(what);
    default:
      return reply satisfies never;
  }
}

/** `PIW_PREFLIGHT_COMMAND` (a JSON argv) and `PIW_PREFLIGHT_TIMEOUT_MS`, checked. */
export type PreflightEnv =
  | { kind: "ok"; command: string[] | undefined; timeoutMs: number }
  | { kind: "invalid"; message: string };

export function readPreflightEnv(env: NodeJS.ProcessEnv): PreflightEnv {
  const command = readPiwEnv(env, PIW_ENV.preflightCommand);
  if (command.kind === "invalid") return command;
  const timeout = readPiwEnv(env, PIW_ENV.preflightTimeoutMs);
  if (timeout.kind === "invalid") return timeout;
  return {
    kind: "ok",
    command: command.kind === "set" ? command.value : undefined,
    timeoutMs: timeout.kind === "set" ? timeout.value : DEFAULT_PREFLIGHT_TIMEOUT_MS,
  };
}
