// piw-worker: started by the piw host ahead of time, then assigned one run command. See @piw/worker
// for the process contract.
import { enableCompileCache, flushCompileCache } from "node:module";
import { join } from "node:path";
// Small and built-ins only, so loading it before the compile cache is on costs next to nothing.
import { PIW_ENV, readPiwEnv } from "@piw/state-dir";

/** @piw/worker's exit code for a closed host channel, which this stage reports the same way. */
const CHANNEL_LOST_EXIT = 2;

/**
 * Resolves once the host has written to this worker (a `wake` or its `assign` push). Nothing is read: the frames
 * stay buffered on stdin for the channel that `runWorkerProcess` opens. A channel closed before that
 * (the host stopping) ends the process at once, with nothing loaded. A worker started for one launch
 * (the launch ID in its environment) or on a terminal does not wait.
 */
function untilHostSpeaks(): Promise<void> {
  const { stdin } = process;
  if (stdin.isTTY || readPiwEnv(process.env, PIW_ENV.launchId).kind === "set") return Promise.resolve();
  const lost = () => process.exit(CHANNEL_LOST_EXIT);
  stdin.once("error", lost);
  return new Promise((resolve) => {
    stdin.once("readable", () => {
      // `readable` with nothing buffered is the end of the stream.
      if (stdin.readableLength === 0) lost();
      stdin.off("error", lost);
      resolve();
    });
  });
}

// Every run gets a fresh worker process (started before the run, while the host waits for work): V8's
// code cache for our modules and zod (in the state dir the host passes) saves a good part of its
// start-up. It has to be on before they load, hence the dynamic imports.
const stateDir = readPiwEnv(process.env, PIW_ENV.home);
enableCompileCache(stateDir.kind === "set" ? join(stateDir.value, "compile-cache") : undefined);
// Idle, the worker holds little more than Node itself: zod, the protocol, the engine and the built-ins
// (about 20 MiB resident) load when the host wakes it for a coming launch or hands it a run; the Pi
// SDK only for an agent step.
await untilHostSpeaks();
const { runWorkerProcess } = await import("@piw/worker");
await import("./register-builtins.js");
// Written now, while the host waits for our hello, rather than when the process exits.
flushCompileCache();
await runWorkerProcess();
