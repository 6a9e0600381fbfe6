import { type CallParams, HostConnection, HostUnavailable } from "@piw/client";
import {
  asSentence,
  type ClientMethod,
  type ClientResult,
  RpcError,
  type RunView,
  type Transition,
} from "@piw/protocol";
import { describeConflict } from "@piw/viewer";

export interface HostLinkOptions {
  /** argv that starts a host when none answers; without it the extension never starts one. */
  hostCommand?: readonly string[] | undefined;
  /** The host's state folder; default `PIW_HOME`, else Pi's agent folder's `workflows/`. */
  stateDir?: string | undefined;
  /**
   * The folder of the Pi SDK package this Pi process runs, told to the host so that its workers can
   * open isolated agent sessions with it (piw installed into Pi has no SDK of its own beside it).
   */
  piSdk?: string | undefined;
  /** Called when the connection came back (a restarted host): re-report what needs it. */
  onReconnect?: () => void;
  /** Called with every pushed view of the watched session's runs. */
  onView: (view: RunView) => void;
  log?: (line: string) => void;
}

/** An error the model or the user can read: no stack, no raw SQLite, one clear sentence. */
export class WorkflowError extends Error {
  override readonly name = "WorkflowError";
  /** The host's error code, when the host refused the request (`answer_invalid`, `refused`…). */
  readonly code: string | undefined;

  constructor(message: string, code?: string) {
    super(message);
    this.code = code;
  }
}

/** The Pi session whose runs the link follows, and the subscription that does it. */
interface Watching {
  sessionId: string;
  stop: Promise<() => Promise<void>>;
}

/**
 * Where the link is: without a connection (the next call opens one), with one (opening or open), or
 * shut down with the Pi session for good. Only a link that is not shut down follows a session.
 */
type LinkPhase =
  | { kind: "idle"; watching: Watching | undefined }
  | { kind: "open"; connection: Promise<HostConnection>; watching: Watching | undefined }
  | { kind: "closed" };

/**
 * The extension's one connection to the piw host: opened on first use (starting a host when allowed),
 * renewed after a host restart, and closed with the Pi session.
 */
export class HostLink {
  private phase: LinkPhase = { kind: "idle", watching: undefined };

  constructor(private readonly options: HostLinkOptions) {}

  /** The one place the phase changes; a shut-down link stays shut down. */
  private move(next: (phase: Exclude<LinkPhase, { kind: "closed" }>) => LinkPhase): void {
    if (this.phase.kind !== "closed") this.phase = next(this.phase);
  }

  private open(): Promise<HostConnection> {
    if (this.phase.kind === "closed")
      return Promise.reject(new WorkflowError("The piw extension was shut down."));
    if (this.phase.kind === "open") return this.phase.connection;
    const connection = HostConnection.open({
      client: "extension",
      ...(this.options.piSdk === undefined ? {} : { piSdk: this.options.piSdk }),
      ...(this.options.stateDir === undefined ? {} : { stateDir: this.options.stateDir }),
      ...(this.options.hostCommand && this.options.hostCommand.length > 0
        ? { hostCommand: this.options.hostCommand }
        : { autoStart: false }),
      reconnect: { maxAttempts: 8, initialDelayMs: 50, maxDelayMs: 1_000 },
    }).then(
      (connection) => {
        connection.on("reconnect", () => this.options.onReconnect?.());
        connection.on("invalidPush", (push) =>
          this.options.log?.(`piw: dropped a malformed ${push} push from the host`),
        );
        connection.on("unavailable", () => {
          // The next call opens a fresh connection (and may start a host again).
          this.move(() => ({ kind: "idle", watching: undefined }));
        });
        return connection;
      },
      (error: unknown) => {
        this.move((phase) => ({ kind: "idle", watching: phase.watching }));
        throw error;
      },
    );
    this.phase = { kind: "open", connection, watching: this.phase.watching };
    return connection;
  }

  /**
   * One host call; host and transport failures become a WorkflowError with a readable message. A start,
   * answer or restart gets one request key, so the connection can send it again after a host crash.
   */
  async call<M extends ClientMethod>(method: M, params: CallParams<M>): Promise<ClientResult<M>> {
    try {
      const connection = await this.open();
      return await connection.call(method, params);
    } catch (error) {
      throw asWorkflowError(error);
    }
  }

  /**
   * Follow the views of one Pi session's runs; the host sends no other run's. Runs of the session can
   * be created elsewhere — a restart or an answer from the CLI — and still reach it. Following another
   * session (a new, resumed or forked one) ends the old subscription.
   */
  watchSession(sessionId: string): void {
    const current = this.phase.kind === "closed" ? undefined : this.phase.watching;
    if (current?.sessionId === sessionId) return;
    if (current) void current.stop.then((stop) => stop()).catch(() => {});
    const stop = this.open().then((connection) => connection.subscribe({ sessionId }, this.options.onView));
    const watching = { sessionId, stop };
    this.move((phase) => ({ ...phase, watching }));
    stop.catch((error: unknown) => {
      this.move((phase) => (phase.watching === watching ? { ...phase, watching: undefined } : phase));
      this.options.log?.(`piw: cannot follow runs: ${asWorkflowError(error).message}`);
    });
  }

  async close(): Promise<void> {
    const connection = this.phase.kind === "open" ? this.phase.connection : undefined;
    this.phase = { kind: "closed" };
    if (connection) await connection.then((c) => c.close()).catch(() => {});
  }
}

export function asWorkflowError(error: unknown): WorkflowError {
  if (error instanceof WorkflowError) return error;
  if (error instanceof HostUnavailable) {
    return new WorkflowError(`The piw host is not reachable (${error.message}).`);
  }
  if (error instanceof RpcError) return new WorkflowError(error.message, error.code);
  const message = error instanceof Error ? error.message.split("\n")[0] : String(error);
  return new WorkflowError(`piw: ${message?.slice(0, 500) ?? "unknown error"}`);
}

/** The saved value of a transition, or a WorkflowError saying in plain words why nothing changed. */
export function savedOrThrow<T>(result: Transition<T>, subject: string): T {
  switch (result.kind) {
    case "applied":
    case "adopted":
      return result.value;
    case "conflict":
      throw new WorkflowError(asSentence(`${subject}: ${describeConflict(result.evidence)}`));
    case "recoveryRequired":
      throw new WorkflowError(
        `${subject}: the run must be recovered first (${result.reason.message.replace(/\.$/, "")}).`,
      );
    default:
      return result satisfies never;
  }
}
