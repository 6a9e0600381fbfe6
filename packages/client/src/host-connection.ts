import { EventEmitter } from "node:events";
import { type ClientMethod, type ClientResult, lostReplyPolicy } from "@piw/protocol";
import { defaultStateDir, hostSocketPath } from "@piw/state-dir";
import { type ConnectOptions, connectHost } from "./connect-host.js";
import type {
  CallArgs,
  HostClient,
  InvalidPush,
  Unsubscribe,
  ViewListener,
  ViewTarget,
} from "./host-client.js";
import { HostUnavailable } from "./host-unavailable.js";
import { withRequestKey } from "./request-key.js";

interface ReconnectPolicy {
  /** Delay before the second attempt; doubles up to `maxDelayMs`. The first attempt is immediate. */
  initialDelayMs?: number;
  maxDelayMs?: number;
  /** Attempts after a disconnect before giving up with `unavailable`. */
  maxAttempts?: number;
}

export interface HostConnectionOptions extends ConnectOptions {
  reconnect?: ReconnectPolicy;
}

export interface HostConnectionEvents {
  /** The host went away; a reconnect has begun. */
  disconnect: [error: HostUnavailable];
  /** Connected again (to a restarted host) and every subscription is renewed. */
  reconnect: [client: HostClient];
  /** Reconnecting gave up; the connection is unusable and calls reject with this error. */
  unavailable: [error: HostUnavailable];
  /** The current client dropped a push whose data its schema refuses (see `HostClient`). */
  invalidPush: [push: InvalidPush];
}

// Each phase holds what it owns: the live client, or the attempt that will produce one.
type ConnectionState =
  | { kind: "connected"; client: HostClient }
  | { kind: "reconnecting"; ready: Promise<HostClient> }
  | { kind: "failed"; error: HostUnavailable }
  | { kind: "closed" };

interface Subscription {
  target: ViewTarget;
  onView: ViewListener;
  /** Ends the subscription on the client it currently lives on. */
  end: Unsubscribe | undefined;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** How often a request whose reply was lost is sent again (after the reconnect) before the caller is told. */
const MAX_RESENDS = 1;

/** The host went away after the request was sent and before it answered. */
function replyLost(error: unknown): boolean {
  return error instanceof HostUnavailable && error.reason === "disconnected";
}

/**
 * A host connection that survives host restarts: when the host goes away it connects again (starting
 * a host when allowed) with bounded backoff, then renews every subscription and hands each one the
 * run's current view, so a follower misses nothing. Calls made while reconnecting wait for it. A call
 * in flight when the host died is sent again after the reconnect when the protocol says a repeat is
 * safe (`lostReplyPolicy`: reads, cancel, and the run-creating methods, which carry one request key
 * for all their sends); any other rejects, as it may or may not have been applied.
 */
export class HostConnection extends EventEmitter<HostConnectionEvents> {
  private state: ConnectionState;
  private readonly subscriptions = new Set<Subscription>();

  private constructor(
    private readonly options: HostConnectionOptions,
    client: HostClient,
  ) {
    super();
    this.state = { kind: "connected", client };
    this.watch(client);
  }

  /** Connect once (auto-starting as `options` allow); rejects like `connectHost`. */
  static async open(options: HostConnectionOptions): Promise<HostConnection> {
    return new HostConnection(options, await connectHost(options));
  }

  get socketPath(): string {
    return hostSocketPath(this.options.stateDir ?? defaultStateDir());
  }

  /** The live client, once connected. */
  async client(): Promise<HostClient> {
    const state = this.state;
    switch (state.kind) {
      case "connected":
        return state.client;
      case "reconnecting":
        return state.ready;
      case "failed":
        throw state.error;
      case "closed":
        throw new HostUnavailable(this.socketPath, "disconnected", "the connection was closed");
      default:
        return state satisfies never;
    }
  }

  async call<M extends ClientMethod>(method: M, ...args: CallArgs<M>): Promise<ClientResult<M>> {
    const send = [withRequestKey(method, args[0])] as CallArgs<M>;
    for (let resends = 0; ; resends += 1) {
      const client = await this.client();
      try {
        return await client.call(method, ...send);
      } catch (error) {
        if (lostReplyPolicy[method] === "report" || !replyLost(error) || resends >= MAX_RESENDS) throw error;
        // The host may have applied it: the same request again (same key) tells, once reconnected.
      }
    }
  }

  /**
   * Follow one run, the runs of one Pi session, or all runs (see `HostClient.subscribe`). After the
   * subscription is in place — now and after every reconnect — a followed run's current view is
   * fetched and delivered, so `onView` may see a view twice.
   */
  async subscribe(target: ViewTarget, onView: ViewListener): Promise<Unsubscribe> {
    const subscription: Subscription = { target, onView, end: undefined };
    this.subscriptions.add(subscription);
    try {
      await this.attach(subscription, await this.client());
    } catch (error) {
      this.subscriptions.delete(subscription);
      throw error;
    }
    return async () => {
      if (!this.subscriptions.delete(subscription)) return;
      await subscription.end?.();
    };
  }

  close(): void {
    const state = this.state;
    this.state = { kind: "closed" };
    this.subscriptions.clear();
    if (state.kind === "connected") state.client.close();
    if (state.kind === "reconnecting")
      state.ready.then(
        (client) => client.close(),
        () => {},
      );
  }

  // A method, not an inline test: `close()` may run during any await of the reconnect loop.
  private isClosed(): boolean {
    return this.state.kind === "closed";
  }

  private async attach(subscription: Subscription, client: HostClient): Promise<void> {
    const { target } = subscription;
    subscription.end = await client.subscribe(target, subscription.onView);
    if (typeof target !== "string") return;
    const view = await client.call("runs.get", { runId: target });
    if (view !== null && this.subscriptions.has(subscription)) subscription.onView(view);
  }

  private watch(client: HostClient): void {
    client.on("invalidPush", (push) => this.emit("invalidPush", push));
    client.once("disconnect", (error) => {
      if (this.state.kind !== "connected" || this.state.client !== client) return;
      const ready = this.reconnect();
      ready.catch(() => {});
      this.state = { kind: "reconnecting", ready };
      this.emit("disconnect", error);
    });
  }

  private async reconnect(): Promise<HostClient> {
    const policy = this.options.reconnect ?? {};
    const maxAttempts = policy.maxAttempts ?? 8;
    let delay = policy.initialDelayMs ?? 100;
    let lastError: unknown;
    for (let attempt = 1; attempt <= maxAttempts; attempt += 1) {
      if (attempt > 1) {
        await sleep(delay);
        delay = Math.min(delay * 2, policy.maxDelayMs ?? 2_000);
      }
      if (this.isClosed()) break;
      try {
        const client = await connectHost(this.options);
        if (this.isClosed()) {
          client.close();
          break;
        }
        for (const subscription of this.subscriptions) await this.attach(subscription, client);
        if (client.closed)
          throw new HostUnavailable(this.socketPath, "disconnected", "the host went away again");
        this.state = { kind: "connected", client };
        this.watch(client);
        this.emit("reconnect", client);
        return client;
      } catch (error) {
        lastError = error;
      }
    }
    const error =
      lastError instanceof HostUnavailable
        ? lastError
        : new HostUnavailable(
            this.socketPath,
            "disconnected",
            lastError instanceof Error ? lastError.message : "the connection was closed",
          );
    if (!this.isClosed()) {
      this.state = { kind: "failed", error };
      this.emit("unavailable", error);
    }
    throw error;
  }
}
