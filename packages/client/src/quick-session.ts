import { randomBytes } from "node:crypto";
import { connect, type Socket } from "node:net";
import {
  type ClientMethod,
  type ClientParams,
  MAX_FRAME_BYTES,
  PROTOCOL_VERSION,
  quickHelloResult,
} from "@piw/protocol";
import { hostSocketPath, verifyHostSocketForClient } from "@piw/state-dir";

/** How long the quick route waits for one reply before it gives the full route its turn. */
const QUICK_TIMEOUT_MS = 2_000;

interface Pending {
  check: (result: unknown) => unknown;
  resolve: (result: unknown) => void;
  timer: NodeJS.Timeout;
}

/**
 * A connection to the running host, the quick way: `hello` is sent at once, calls go out beside it,
 * and every reply is checked without zod (`quickHelloResult` and the caller's check). A call resolves
 * with the checked result, or with undefined whenever anything is other than plain: an error reply, a
 * reply the check does not take, a hello this protocol does not take, a slow or lost host. The caller
 * then does what it would have done anyway, by the full client (which parses every reply with the
 * protocol's schemas). After the first undefined the session is over: `onEnd` is told once.
 */
export class QuickSession {
  private buffered = "";
  private nextId = 2;
  private readonly pending = new Map<number, Pending>();
  private hello: "waiting" | "ok" = "waiting";
  private readonly held: { id: number; result: unknown }[] = [];
  private ended = false;
  private onPush: (push: string, data: unknown) => void = () => {};
  private onEnd: () => void = () => {};

  private constructor(
    private readonly socket: Socket,
    launching: boolean,
  ) {
    socket.setEncoding("utf8");
    socket.on("error", () => this.end());
    socket.on("close", () => this.end());
    socket.on("data", (chunk: string) => this.feed(chunk));
    // The full client's hello (`HostClient.open`), for the CLI.
    const hello = {
      protocol: PROTOCOL_VERSION,
      client: "cli",
      pid: process.pid,
      ...(launching ? { launching: true } : {}),
    };
    this.send(1, "hello", hello);
  }

  /**
   * A session with the running host; undefined when none runs or its socket is not this user's alone.
   * `launching`: the client is about to launch a run (told in `hello`, as the full client tells it).
   */
  static open(stateDir: string, how: { launching?: boolean } = {}): QuickSession | undefined {
    const socketPath = hostSocketPath(stateDir);
    try {
      verifyHostSocketForClient(socketPath);
    } catch {
      return undefined;
    }
    return new QuickSession(connect(socketPath), how.launching === true);
  }

  /** Receive the host's pushes (`run.view`), unchecked: the caller checks them. */
  listen(onPush: (push: string, data: unknown) => void, onEnd: () => void): void {
    this.onPush = onPush;
    this.onEnd = onEnd;
  }

  call<M extends ClientMethod, T>(
    method: M,
    params: ClientParams<M>,
    check: (result: unknown) => T | undefined,
  ): Promise<T | undefined> {
    if (this.ended) return Promise.resolve(undefined);
    const id = this.nextId++;
    return new Promise((resolve) => {
      const timer = setTimeout(() => this.end(), QUICK_TIMEOUT_MS);
      this.pending.set(id, { check, resolve: resolve as (result: unknown) => void, timer });
      this.send(id, method, params);
    });
  }

  close(): void {
    this.end();
  }

  private send(id: number, method: string, params: unknown): void {
    this.socket.write(`${JSON.stringify({ v: PROTOCOL_VERSION, id, method, params })}\n`);
  }

  private end(): void {
    if (this.ended) return;
    this.ended = true;
    this.socket.destroy();
    for (const { resolve, timer } of this.pending.values()) {
      clearTimeout(timer);
      resolve(undefined);
    }
    this.pending.clear();
    this.onEnd();
  }

  private feed(chunk: string): void {
    this.buffered += chunk;
    if (this.buffered.length > 2 * MAX_FRAME_BYTES) {
      this.end();
      return;
    }
    let newline = this.buffered.indexOf("\n");
    while (newline !== -1 && !this.ended) {
      const line = this.buffered.slice(0, newline);
      this.buffered = this.buffered.slice(newline + 1);
      if (Buffer.byteLength(line) > MAX_FRAME_BYTES) {
        this.end();
        return;
      }
      let frame: unknown;
      try {
        frame = JSON.parse(line);
      } catch {
        this.end();
        return;
      }
      this.take(frame);
      newline = this.buffered.indexOf("\n");
    }
  }

  private take(raw: unknown): void {
    if (typeof raw !== "object" || raw === null || Array.isArray(raw)) {
      this.end();
      return;
    }
    const frame = raw as Record<string, unknown>;
    const keys = Object.keys(frame).sort().join(",");
    if (frame.v !== PROTOCOL_VERSION) {
      this.end();
      return;
    }
    if (keys === "data,push,v" && typeof frame.push === "string") {
      this.onPush(frame.push, frame.data);
      return;
    }
    if (keys !== "id,result,v" || typeof frame.id !== "number") {
      this.end();
      return;
    }
    if (frame.id === 1) {
      if (quickHelloResult(frame.result, PROTOCOL_VERSION) === undefined) {
        this.end();
        return;
      }
      this.hello = "ok";
      for (const reply of this.held.splice(0)) this.settle(reply.id, reply.result);
      return;
    }
    // A reply is taken only from a host whose hello this protocol takes.
    if (this.hello === "waiting") this.held.push({ id: frame.id, result: frame.result });
    else this.settle(frame.id, frame.result);
  }

  private settle(id: number, result: unknown): void {
    const pending = this.pending.get(id);
    if (pending === undefined) {
      this.end();
      return;
    }
    this.pending.delete(id);
    clearTimeout(pending.timer);
    const checked = pending.check(result);
    if (checked === undefined) {
      this.end();
      pending.resolve(undefined);
    } else pending.resolve(checked);
  }
}

/** A fresh key for one user action that creates a run: 128 random bits (as `newRequestKey`). */
export function quickRequestKey(): string {
  return randomBytes(16).toString("hex");
}
