import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { HostConnection } from "@piw/client";
import type { RunView } from "@piw/protocol";
import { type FakeModel, startFakeModel } from "./fake-model.ts";
import { type PiSession, startPiSession } from "./pi-session.ts";
import { HOST_COMMAND, hostPidIn, REPO, sourceWorkerEnv, stopHost } from "./piw-processes.ts";
import { removeTree } from "./remove-tree.ts";

/** The Pi package as a user installs it: its built extension and its skill. */
export const PI_PACKAGE = join(REPO, "apps", "pi-package");

/** The environment that points the extension at a state dir and runs host and workers from source. */
export function piwEnv(stateDir: string): Record<string, string> {
  return { PIW_HOME: stateDir, PIW_HOST_COMMAND: JSON.stringify(HOST_COMMAND), ...sourceWorkerEnv() };
}

/** One isolated piw world: a state dir, a project with workflows, a fake model and a real Pi. */
export interface PiwWorld {
  root: string;
  stateDir: string;
  project: string;
  model: FakeModel;
  pi: PiSession;
  env: Record<string, string>;
  /** A client of the same host the extension talks to (auto-starting it like the extension does). */
  host(): Promise<HostConnection>;
  writeWorkflow(name: string, source: string): string;
  /** Wait until the run's view satisfies `done` (views are pushed by the host). */
  waitForRun(runId: string, done: (view: RunView) => boolean, timeoutMs?: number): Promise<RunView>;
  /** The PID in the host lock, if a host runs. */
  hostPid(): number | undefined;
  close(): Promise<void>;
}

export interface WorldOptions {
  workflows?: Record<string, string>;
  env?: Record<string, string>;
}

/** Build a world; the package must be built (`pnpm build`): Pi loads its `dist/extension.js`. */
export async function startPiwWorld(options: WorldOptions = {}): Promise<PiwWorld> {
  const extensionEntry = join(PI_PACKAGE, "dist", "extension.js");
  if (!existsSync(extensionEntry)) {
    throw new Error(`${extensionEntry} is missing: run pnpm build before the e2e tests`);
  }
  const root = mkdtempSync(join(tmpdir(), "piw-e2e-world-"));
  const stateDir = join(root, "state");
  const project = join(root, "project");
  mkdirSync(join(project, ".pi", "workflows"), { recursive: true });
  const writeWorkflow = (name: string, source: string) => {
    const file = join(project, ".pi", "workflows", `${name}.workflow.ts`);
    writeFileSync(file, source);
    return file;
  };
  for (const [name, source] of Object.entries(options.workflows ?? {})) writeWorkflow(name, source);
  const env: Record<string, string> = { ...piwEnv(stateDir), ...options.env };
  const model = await startFakeModel();
  let pi: PiSession;
  try {
    pi = await startPiSession({ model, cwd: project, extensions: [PI_PACKAGE], env });
  } catch (error) {
    await model.close();
    rmSync(root, { recursive: true, force: true });
    throw error;
  }
  const connections: HostConnection[] = [];
  const host = async () => {
    const connection = await HostConnection.open({
      client: "test",
      stateDir,
      hostCommand: HOST_COMMAND,
      reconnect: { maxAttempts: 20, initialDelayMs: 50, maxDelayMs: 500 },
    });
    connections.push(connection);
    return connection;
  };
  const hostPid = () => hostPidIn(stateDir);
  const waitForRun = async (runId: string, done: (view: RunView) => boolean, timeoutMs = 30_000) => {
    const connection = await host();
    let latest: RunView | null = null;
    return new Promise<RunView>((resolveView, reject) => {
      let stop: (() => Promise<void>) | undefined;
      const timer = setTimeout(() => {
        void stop?.();
        reject(
          new Error(
            `run ${runId} did not reach the expected state in ${timeoutMs} ms; last view: ${
              latest
                ? `${latest.status}/${latest.outcome} nodes ${latest.nodes.map((n) => `${n.path}:${n.state}`).join(",")}`
                : "none"
            }\npi stderr: ${pi.stderr.slice(-2000)}`,
          ),
        );
      }, timeoutMs);
      const check = (view: RunView) => {
        latest = view;
        if (!done(view)) return;
        clearTimeout(timer);
        void stop?.();
        resolveView(view);
      };
      connection.subscribe(runId, check).then(
        (unsubscribe) => {
          stop = unsubscribe;
        },
        (error: unknown) => {
          clearTimeout(timer);
          reject(error);
        },
      );
    });
  };
  return {
    root,
    stateDir,
    project,
    model,
    pi,
    env,
    host,
    writeWorkflow,
    waitForRun,
    hostPid,
    async close() {
      await pi.close();
      for (const connection of connections) connection.close();
      await model.close();
      await stopHost(stateDir);
      // A worker or host that is still exiting may write its compile cache for a moment.
      removeTree(root);
    },
  };
}

/** The text of every piw custom message in the Pi session, in order. */
export async function piwMessages(
  pi: PiSession,
): Promise<Array<{ text: string; details: Record<string, unknown> }>> {
  const entries = (await pi.getEntries()) as Array<Record<string, unknown>>;
  return entries
    .filter((entry) => entry.type === "custom_message" && entry.customType === "piw")
    .map((entry) => ({
      text: typeof entry.content === "string" ? entry.content : JSON.stringify(entry.content),
      details: (entry.details ?? {}) as Record<string, unknown>,
    }));
}

/** The run ID in a `Workflow <name> queued (run <id>).` tool result. */
export function queuedRunId(text: string): string {
  const match = /queued \(run ([^)\s]+)\)/.exec(text);
  if (!match?.[1]) throw new Error(`no queued run ID in: ${text.slice(0, 300)}`);
  return match[1];
}
