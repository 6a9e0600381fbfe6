import { spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import {
  type JsonValue,
  type PreflightLaunch,
  preflightReplySchema,
  type SafeError,
  safeError,
} from "@piw/protocol";

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
 * only its typed reply comes back. Runs without a Pi session: agent steps run isolated.
 */
export function preflightRunner(
  command: readonly string[],
  timeoutMs: number,
  env: NodeJS.ProcessEnv,
): PreflightRunner {
  return (request) =>
    new Promise((resolve) => {
      const [file, ...args] = command;
      if (file === undefined) {
        resolve(refused("preflight_failed", "no preflight command is configured"));
        return;
      }
      const requestId = randomUUID();
      let settled = false;
      const child = spawn(file, args, {
        cwd: request.workingDir,
        env,
        stdio: ["ignore", "ignore", "ignore", "ipc"],
        detached: true,
        serialization: "json",
      });
      const settle = (outcome: FiringPreflight) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        if (child.pid !== undefined && child.exitCode === null && child.signalCode === null) {
          try {
            process.kill(-child.pid, "SIGKILL");
          } catch {
            // Already gone.
          }
        }
        resolve(outcome);
      };
      const timer = setTimeout(
        () => settle(refused("workflow_load_timeout", `the workflow did not load within ${timeoutMs} ms`)),
        timeoutMs,
      );
      child.on("error", () => settle(refused("preflight_failed", "cannot start the preflight process")));
      // `close`, not `exit`: a reply sent just before the child exits is read before its channel closes.
      child.on("close", () =>
        settle(refused("workflow_exited_at_load", "the workflow ended its preflight process")),
      );
      child.on("message", (raw: unknown) => {
        const reply = preflightReplySchema.safeParse(raw);
        if (!reply.success || reply.data.requestId !== requestId) return;
        const data = reply.data;
        switch (data.type) {
          case "launch.prepared":
            return settle({ ok: true, launch: data.launch });
          case "refused":
            return settle(refused(data.refusal.code, data.refusal.message));
          case "crashed":
            return settle(refused("workflow_crashed_at_load", "the workflow crashed while it loaded"));
          case "described":
          case "builtins.described":
            return settle(refused("preflight_failed", "the preflight process answered another request"));
          default:
            return data satisfies never;
        }
      });
      child.send(
        {
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
        () => {},
      );
    });
}
