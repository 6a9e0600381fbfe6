import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { StringDecoder } from "node:string_decoder";
import { piProcessEnv, writeAgentConfig } from "./pi-agent-dir.ts";
import type {
  PiSessionOptions,
  RpcCommand,
  RpcRecord,
  RpcResponse,
  WaitOptions,
} from "./pi-session-types.ts";

/** The `pi` binary installed as this package's devDependency. */
export const PI_BIN = resolve(import.meta.dirname, "..", "node_modules", ".bin", "pi");

const RECENT_EVENTS_IN_ERRORS = 25;

/**
 * One real `pi --mode rpc` process, isolated in its own temp HOME and agent dir.
 * Events are recorded in arrival order; `waitForEvent` reads them like a stream with a cursor.
 */
export class PiSession {
  /** Every non-response stdout record, in arrival order. */
  readonly events: RpcRecord[] = [];
  readonly root: string;
  readonly home: string;
  readonly agentDir: string;
  readonly cwd: string;
  private stderrText = "";
  private cursor = 0;
  private nextId = 1;
  private readonly pending = new Map<
    string,
    { resolve: (r: RpcResponse) => void; reject: (e: Error) => void }
  >();
  private readonly listeners = new Set<() => void>();
  private exitInfo: { code: number | null; signal: NodeJS.Signals | null } | undefined;
  private readonly exited: Promise<void>;
  private closed = false;

  private readonly child: ChildProcessWithoutNullStreams;

  private constructor(
    child: ChildProcessWithoutNullStreams,
    dirs: { root: string; home: string; agentDir: string; cwd: string },
  ) {
    this.child = child;
    this.root = dirs.root;
    this.home = dirs.home;
    this.agentDir = dirs.agentDir;
    this.cwd = dirs.cwd;
    liveSessions.add(this);

    const decoder = new StringDecoder("utf8");
    let buffered = "";
    // Split on LF only: readline would also split on U+2028/U+2029 inside JSON strings.
    child.stdout.on("data", (chunk: Buffer) => {
      buffered += decoder.write(chunk);
      let newline = buffered.indexOf("\n");
      while (newline >= 0) {
        const line = buffered.slice(0, newline).replace(/\r$/, "");
        buffered = buffered.slice(newline + 1);
        if (line.trim().length > 0) this.onLine(line);
        newline = buffered.indexOf("\n");
      }
    });
    child.stderr.on("data", (chunk: Buffer) => {
      this.stderrText += chunk.toString("utf8");
    });
    // Writing to a dead Pi raises EPIPE on stdin; keep it as a diagnostic, not a crash of the test run.
    child.stdin.on("error", (error) => {
      this.stderrText += `[e2e] pi stdin: ${error.message}\n`;
    });
    this.exited = new Promise((resolveExit) => {
      child.on("error", (error) => {
        this.stderrText += `[e2e] could not run ${PI_BIN}: ${error.message}\n`;
        if (child.pid === undefined) this.onExit(resolveExit, null, null);
      });
      child.on("exit", (code, signal) => this.onExit(resolveExit, code, signal));
    });
  }

  private onExit(resolveExit: () => void, code: number | null, signal: NodeJS.Signals | null): void {
    if (this.exitInfo) return;
    this.exitInfo = { code, signal };
    for (const { reject } of this.pending.values()) {
      reject(new Error(`pi exited (${this.describeExit()}) before answering.\n${this.diagnostics()}`));
    }
    this.pending.clear();
    this.notify();
    resolveExit();
  }

  /** Writes the isolated config, spawns Pi and waits until it answers `get_state`. */
  static async start(options: PiSessionOptions): Promise<PiSession> {
    const root = mkdtempSync(join(tmpdir(), "piw-e2e-"));
    const home = join(root, "home");
    const agentDir = join(root, "agent");
    const cwd = options.cwd ?? join(root, "project");
    mkdirSync(home, { recursive: true });
    mkdirSync(agentDir, { recursive: true });
    mkdirSync(cwd, { recursive: true });
    writeAgentConfig(agentDir, options);

    const args = ["--mode", "rpc"];
    for (const extension of options.extensions ?? []) args.push("-e", extension);
    args.push(...(options.args ?? []));

    const child = spawn(PI_BIN, args, {
      cwd,
      // Own process group, so close() can kill Pi and everything it started.
      detached: true,
      stdio: ["pipe", "pipe", "pipe"],
      env: {
        ...piProcessEnv(home, agentDir),
        NO_COLOR: "1",
        ...options.env,
      },
    });
    const session = new PiSession(child, { root, home, agentDir, cwd });
    try {
      await session.send({ type: "get_state" }, options.startupTimeoutMs ?? 30_000);
    } catch (error) {
      await session.close();
      throw error;
    }
    return session;
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  get stderr(): string {
    return this.stderrText;
  }

  /** Sends a command and resolves with its response (successful or not). */
  send(command: RpcCommand, timeoutMs = 30_000): Promise<RpcResponse> {
    if (this.exitInfo) {
      return Promise.reject(new Error(`pi already exited (${this.describeExit()}).\n${this.diagnostics()}`));
    }
    const id = `e2e-${this.nextId++}`;
    return new Promise((resolvePromise, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(new Error(`pi did not answer ${command.type} within ${timeoutMs} ms.\n${this.diagnostics()}`));
      }, timeoutMs);
      this.pending.set(id, {
        resolve: (response) => {
          clearTimeout(timer);
          resolvePromise(response);
        },
        reject: (error) => {
          clearTimeout(timer);
          reject(error);
        },
      });
      this.child.stdin.write(`${JSON.stringify({ ...command, id })}\n`);
    });
  }

  /** Like `send`, but throws unless the response says `success: true`; returns its `data`. */
  async call<T = unknown>(command: RpcCommand, timeoutMs?: number): Promise<T> {
    const response = await this.send(command, timeoutMs);
    if (!response.success) {
      throw new Error(
        `pi rejected ${command.type}: ${response.error ?? "(no error text)"}\n${this.diagnostics()}`,
      );
    }
    return response.data as T;
  }

  /**
   * Answers an extension dialog (`extension_ui_request` with method select/confirm/input/editor), as a
   * user at Pi's UI would: Pi sends no response to it.
   */
  respondToUi(
    requestId: string,
    reply: { value: string } | { confirmed: boolean } | { cancelled: true },
  ): void {
    this.child.stdin.write(`${JSON.stringify({ type: "extension_ui_response", id: requestId, ...reply })}\n`);
  }

  /** Sends a prompt; resolves once Pi accepted it (not when the run ends). */
  prompt(message: string, streamingBehavior?: "steer" | "followUp"): Promise<{ disposition: string }> {
    return this.call({ type: "prompt", message, ...(streamingBehavior ? { streamingBehavior } : {}) });
  }

  /** Sends a prompt and waits for the run it started to settle; returns the `agent_settled` event. */
  async promptAndSettle(message: string, timeoutMs = 30_000): Promise<RpcRecord> {
    const since = this.events.length;
    await this.prompt(message);
    return this.waitForEvent((e) => e.type === "agent_settled", { since, timeoutMs });
  }

  /** Aborts the current run; Pi answers once the session is idle. */
  async abort(): Promise<void> {
    await this.call({ type: "abort" });
  }

  getState(): Promise<
    Record<string, unknown> & { isStreaming: boolean; sessionId: string; sessionFile?: string }
  > {
    return this.call({ type: "get_state" });
  }

  async getMessages(): Promise<Array<Record<string, unknown>>> {
    const data = await this.call<{ messages: Array<Record<string, unknown>> }>({ type: "get_messages" });
    return data.messages;
  }

  /** Session entries in append order (no header), via the `get_entries` command. */
  async getEntries(): Promise<Array<Record<string, unknown>>> {
    const data = await this.call<{ entries: Array<Record<string, unknown>> }>({ type: "get_entries" });
    return data.entries;
  }

  /** The session file, parsed line by line (header first); `[]` when Pi keeps no file. */
  async readSessionFile(): Promise<Array<Record<string, unknown>>> {
    const state = await this.getState();
    if (!state.sessionFile) return [];
    return readFileSync(state.sessionFile, "utf8")
      .split("\n")
      .filter((line) => line.trim().length > 0)
      .map((line) => JSON.parse(line) as Record<string, unknown>);
  }

  /** Current event index; pass it as `since` to wait only for later events. */
  mark(): number {
    return this.events.length;
  }

  /**
   * Resolves with the first event matching `predicate` at or after the read cursor (or `since`),
   * and moves the cursor past it. Fails listing the recent events and stderr.
   */
  waitForEvent(predicate: (event: RpcRecord) => boolean, options: WaitOptions = {}): Promise<RpcRecord> {
    const timeoutMs = options.timeoutMs ?? 30_000;
    let scanFrom = options.since ?? this.cursor;
    return new Promise((resolvePromise, reject) => {
      const check = (): boolean => {
        for (let i = scanFrom; i < this.events.length; i++) {
          const event = this.events[i] as RpcRecord;
          if (predicate(event)) {
            this.cursor = Math.max(this.cursor, i + 1);
            finish();
            resolvePromise(event);
            return true;
          }
        }
        scanFrom = this.events.length;
        if (this.exitInfo) {
          finish();
          reject(
            new Error(
              `pi exited (${this.describeExit()}) while waiting for an event.\n${this.diagnostics()}`,
            ),
          );
          return true;
        }
        return false;
      };
      const timer = setTimeout(() => {
        finish();
        reject(new Error(`no matching pi event within ${timeoutMs} ms.\n${this.diagnostics()}`));
      }, timeoutMs);
      const finish = () => {
        clearTimeout(timer);
        this.listeners.delete(listener);
      };
      const listener = () => {
        check();
      };
      this.listeners.add(listener);
      check();
    });
  }

  /** Waits for the next `agent_settled` after the cursor (or `since`), then checks Pi reports idle. */
  async waitForIdle(options: WaitOptions = {}): Promise<RpcRecord> {
    const settled = await this.waitForEvent((e) => e.type === "agent_settled", options);
    const state = await this.getState();
    if (state.isStreaming) {
      throw new Error(`pi settled but get_state still reports streaming.\n${this.diagnostics()}`);
    }
    return settled;
  }

  /** Recent events and stderr, for failure messages. */
  diagnostics(): string {
    const recent = this.events.slice(-RECENT_EVENTS_IN_ERRORS).map((e) => `  ${summarizeEvent(e)}`);
    const stderrTail = this.stderrText.trim().split("\n").slice(-20).join("\n");
    return [
      `recent events (${this.events.length} total, cursor ${this.cursor}):`,
      recent.length > 0 ? recent.join("\n") : "  (none)",
      `stderr tail:\n${stderrTail || "  (empty)"}`,
    ].join("\n");
  }

  /** Closes stdin, then SIGTERM and SIGKILL to the whole process group; removes the temp dirs. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    liveSessions.delete(this);
    if (!this.exitInfo) {
      this.child.stdin.end();
      if (!(await this.exitsWithin(2_000))) {
        this.killGroup("SIGTERM");
        if (!(await this.exitsWithin(2_000))) {
          this.killGroup("SIGKILL");
          await this.exitsWithin(2_000);
        }
      }
    }
    // Pi may be gone while a child it spawned lives on in the group.
    this.killGroup("SIGKILL");
    rmSync(this.root, { recursive: true, force: true });
  }

  /** Synchronous last resort for process exit hooks. */
  killNow(): void {
    this.killGroup("SIGKILL");
  }

  private killGroup(signal: NodeJS.Signals): void {
    const pid = this.child.pid;
    if (pid === undefined) return;
    try {
      process.kill(-pid, signal);
    } catch {
      // The group is already gone.
    }
  }

  private async exitsWithin(ms: number): Promise<boolean> {
    if (this.exitInfo) return true;
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<false>((r) => {
      timer = setTimeout(() => r(false), ms);
    });
    const result = await Promise.race([this.exited.then(() => true as const), timeout]);
    clearTimeout(timer);
    return result;
  }

  private onLine(line: string): void {
    let record: RpcRecord;
    try {
      record = JSON.parse(line) as RpcRecord;
    } catch {
      this.stderrText += `[e2e] non-JSON stdout line: ${line.slice(0, 500)}\n`;
      return;
    }
    if (record.type === "response" && typeof record.id === "string" && this.pending.has(record.id)) {
      const waiter = this.pending.get(record.id);
      this.pending.delete(record.id);
      waiter?.resolve(record as RpcResponse);
      return;
    }
    this.events.push(record);
    this.notify();
  }

  private notify(): void {
    for (const listener of [...this.listeners]) listener();
  }

  private describeExit(): string {
    return this.exitInfo ? `code ${this.exitInfo.code}, signal ${this.exitInfo.signal}` : "running";
  }
}

export function startPiSession(options: PiSessionOptions): Promise<PiSession> {
  return PiSession.start(options);
}

function summarizeEvent(event: RpcRecord): string {
  const text = JSON.stringify(event);
  return text.length > 300 ? `${text.slice(0, 300)}…` : text;
}

// A test that throws before close() must still not leave a pi process behind.
const liveSessions = new Set<PiSession>();
process.once("exit", () => {
  for (const session of liveSessions) session.killNow();
});
