import { type Handlers, type RunCommand, RpcPeer, workerMethods } from "@piw/protocol";
import type { RunStore } from "@piw/store";
import { AgentProgressBoard } from "./agent-progress-board.js";
import { GroupCommitter } from "./group-committer.js";
import { type HostLog, silentLog } from "./host-log.js";
import { LiveWorker, type WorkerPeer } from "./live-worker.js";
import { workerHandlers } from "./worker-channel.js";
import type { WorkerProcess } from "./worker-process.js";

export interface LoneWorkerChannelOptions {
  store: RunStore;
  launchId: string;
  /** The claimed command: its fence is the one every store call of the channel carries. */
  command: RunCommand;
  /** The worker's process; the channel's frames go to `send`. */
  process: WorkerProcess;
  log?: HostLog;
  /**
   * Sees the host's handlers before they serve: a test records calls or replaces a reply here to
   * inject a fault, while the handlers themselves stay the host's.
   */
  wrap?(handlers: Handlers<typeof workerMethods>): Handlers<typeof workerMethods>;
}

/**
 * One worker's channel served by the host's own handlers (`workerHandlers`) without a running host:
 * no supervisor, clock or views, so a test can drive a real worker process against a real store and
 * still get exactly what the host would answer. Feed the worker's stdout to `peer.feed`.
 */
export function loneWorkerChannel(options: LoneWorkerChannelOptions): LiveWorker {
  const { store } = options;
  const runChanged = () => {};
  const deps = {
    store,
    log: options.log ?? silentLog,
    progress: new AgentProgressBoard(),
    piSdk: { entry: () => undefined },
    runChanged,
    committer: new GroupCommitter({ store, enabled: true, runChanged }),
  };
  const wrap = options.wrap ?? ((handlers) => handlers);
  return new LiveWorker(
    options.launchId,
    options.command,
    options.process,
    (self): WorkerPeer =>
      new RpcPeer({
        send: (line) => options.process.send(line),
        local: { methods: workerMethods, handlers: wrap(workerHandlers(deps, self)) },
      }),
  );
}
