import { EventEmitter } from "node:events";
import { connect, type Socket } from "node:net";
import {
  type ClientMethod,
  type ClientResult,
  clientMethods,
  clientPushes,
  dispatchPushes,
  PROTOCOL_VERSION,
  type PushName,
  RpcPeer,
  type RunView,
} from "@piw/protocol";
import { StateDirRefused, verifyHostSocketForClient } from "@piw/state-dir";
import type { z } from "zod";
import { HostUnavailable } from "./host-unavailable.js";
import { type CallParams, withRequestKey } from "./request-key.js";

export type ClientKind = z.infer<typeof clientMethods.hello.params>["client"];
export type HostHello = ClientResult<"hello">;

/** Arguments of `call`: the params may be left out only for methods whose params are optional. */
export type CallArgs<M extends ClientMethod> =
  undefined extends CallParams<M> ? [params?: CallParams<M>] : [params: CallParams<M>];

export type ViewListener = (view: RunView) => void;
/** Ends a subscription; never rejects. */
export type Unsubscribe = () => Promise<void>;

/** What a subscription follows: one run (its ID), the runs of one Pi session, or every run (undefined). */
export type ViewTarget = string | { sessionId: string } | undefined;

/** A push from the host whose data did not match its schema: it was dropped, not delivered. */
export type InvalidPush = PushName<typeof clientPushes>;

export interface HostClientEvents {
  /** The connection ended without `close()`: the host stopped, crashed or dropped us. */
  disconnect: [error: HostUnavailable];
  /** The host pushed data its schema refuses (a host bug or another version): dropped, nothing else changed. */
  invalidPush: [push: InvalidPush];
}

export interface OpenClientOptions {
  client: ClientKind;
  /** Told to the host in `hello` by the extension: the folder of its Pi's SDK package. */
  piSdk?: string;
  /** Told to the host in `hello`: this client is about to launch a run. */
  launching?: boolean;
  /** How long the connect and the `hello` handshake may take together. */
  timeoutMs?: number;
}

// Pushes for a subscription can arrive before the reply that names it has been handled.
const MAX_EARLY_PUSHES = 256;

/**
 * One connection to the host after a successful `hello`. Calls are typed by the client protocol and
 * their results parsed with its schemas; `run.view` pushes are parsed and routed to subscribers.
 */
export class HostClient extends EventEmitter<HostClientEvents> {
  private readonly viewListeners = new Map<string, ViewListener>();
  private readonly earlyPushes: { subscriptionId: string; view: RunView }[] = [];
  private pendingSubscribes = 0;
  private ended: HostUnavailable | undefined;
  private closedByUs = false;
  private readonly disconnected: Promise<never>;
  private rejectDisconnected: (error: HostUnavailable) => void = () => {};
  private hostHello: HostHello | undefined;

  private constructor(
    readonly socketPath: string,
    private readonly socket: Socket,
    private readonly peer: RpcPeer<Record<never, never>, typeof clientMethods>,
  ) {
    super();
    this.disconnected = new Promise<never>((_, reject) => {
      this.rejectDisconnected = reject;
    });
    this.disconnected.catch(() => {});
  }

  /**
   * Connect to the socket and say hello. Rejects with HostUnavailable `untrusted`, before connecting,
   * when the socket or its directory is not this user's alone; with the socket's own error (its `code` tells a missing
   * host from other trouble), with HostUnavailable when the host hung up or did not answer in time, or
   * with an RpcError when the host refused the handshake (another protocol version).
   */
  static open(socketPath: string, options: OpenClientOptions): Promise<HostClient> {
    // Before a byte is sent (hello names our pid; later calls carry run input): is this our own host?
    try {
      verifyHostSocketForClient(socketPath);
    } catch (error) {
      if (error instanceof StateDirRefused) {
        return Promise.reject(
          new HostUnavailable(socketPath, "untrusted", `refusing to connect: ${error.message}`),
        );
      }
      // Anything else (say EACCES on the way to it) is for connect to report.
    }
    return new Promise((resolve, reject) => {
      const socket = connect(socketPath);
      socket.setEncoding("utf8");
      const timer = setTimeout(() => {
        socket.destroy();
        reject(new HostUnavailable(socketPath, "timeout", "the host did not answer hello in time"));
      }, options.timeoutMs ?? 5_000);
      const peer = new RpcPeer<Record<never, never>, typeof clientMethods>({
        send: (line) => {
          if (!socket.destroyed) socket.write(line);
        },
        remote: clientMethods,
        onPush: dispatchPushes(clientPushes, { "run.view": (push) => opened.receiveView(push) }, (push) =>
          opened.emit("invalidPush", push),
        ),
      });
      const opened = new HostClient(socketPath, socket, peer);
      socket.on("data", (chunk: string) => peer.feed(chunk));
      const failBeforeHello = (error: Error): void => {
        clearTimeout(timer);
        socket.destroy();
        reject(error);
      };
      socket.once("error", failBeforeHello);
      socket.once("close", () => {
        clearTimeout(timer);
        const error =
          opened.ended ?? new HostUnavailable(socketPath, "disconnected", "the host closed the connection");
        reject(error);
        opened.finish(error);
      });
      socket.once("connect", () => {
        peer
          .call("hello", {
            protocol: PROTOCOL_VERSION,
            client: options.client,
            pid: process.pid,
            ...(options.piSdk === undefined ? {} : { piSdk: options.piSdk }),
            ...(options.launching === true ? { launching: true } : {}),
          })
          .then((hello) => {
            clearTimeout(timer);
            socket.off("error", failBeforeHello);
            // After hello, a socket error is followed by `close`, which reports the disconnect.
            socket.on("error", () => {});
            opened.hostHello = hello;
            resolve(opened);
          }, failBeforeHello);
      });
    });
  }

  /** What the host said in the handshake: its pid, state folder and version. */
  get hello(): HostHello {
    if (this.hostHello === undefined) throw new Error("HostClient used before hello");
    return this.hostHello;
  }

  get closed(): boolean {
    return this.ended !== undefined;
  }

  /**
   * Call a host method once. Rejects with RpcError for the host's typed errors, HostUnavailable when
   * disconnected; a run-creating method without a `requestKey` gets a new one (`HostConnection` keeps
   * one key across the sends of a call).
   */
  async call<M extends ClientMethod>(method: M, ...args: CallArgs<M>): Promise<ClientResult<M>> {
    if (this.ended) throw this.ended;
    return Promise.race([this.peer.call(method, withRequestKey(method, args[0])), this.disconnected]);
  }

  /**
   * Receive every `run.view` of one run (a run ID), of the runs of one Pi session (`{ sessionId }`:
   * the host sends no other run's views), or of all runs (undefined). Resolves once the host has
   * accepted the subscription; the returned function ends it.
   */
  async subscribe(target: ViewTarget, onView: ViewListener): Promise<Unsubscribe> {
    this.pendingSubscribes += 1;
    let subscriptionId: string;
    try {
      ({ subscriptionId } = await this.call(
        "runs.subscribe",
        target === undefined ? {} : typeof target === "string" ? { runId: target } : target,
      ));
    } finally {
      this.pendingSubscribes -= 1;
    }
    this.viewListeners.set(subscriptionId, onView);
    this.flushEarlyPushes(subscriptionId, onView);
    return async () => {
      if (!this.viewListeners.delete(subscriptionId) || this.ended) return;
      await this.call("runs.unsubscribe", { subscriptionId }).catch(() => {});
    };
  }

  /** Close the connection; pending calls reject with HostUnavailable. Emits no `disconnect`. */
  close(): void {
    if (this.ended) return;
    this.closedByUs = true;
    this.finish(new HostUnavailable(this.socketPath, "disconnected", "the connection was closed"));
    this.socket.destroy();
  }

  /** The connection is over, by `close()` or by the socket closing; runs once. */
  private finish(error: HostUnavailable): void {
    if (this.ended) return;
    this.ended = error;
    this.rejectDisconnected(error);
    this.peer.close(error.message);
    this.viewListeners.clear();
    this.earlyPushes.length = 0;
    if (!this.closedByUs && this.hostHello !== undefined) this.emit("disconnect", error);
  }

  private receiveView({ subscriptionId, view }: z.infer<(typeof clientPushes)["run.view"]>): void {
    const listener = this.viewListeners.get(subscriptionId);
    if (listener) {
      listener(view);
      return;
    }
    if (this.pendingSubscribes > 0 && this.earlyPushes.length < MAX_EARLY_PUSHES) {
      this.earlyPushes.push({ subscriptionId, view });
    }
  }

  private flushEarlyPushes(subscriptionId: string, onView: ViewListener): void {
    const mine = this.earlyPushes.filter((p) => p.subscriptionId === subscriptionId);
    if (mine.length === 0) return;
    const rest = this.earlyPushes.filter((p) => p.subscriptionId !== subscriptionId);
    this.earlyPushes.splice(0, this.earlyPushes.length, ...rest);
    for (const push of mine) onView(push.view);
  }
}
