// piw-worker: started by the piw host ahead of time, then assigned one run command. See @piw/worker
// for the process contract.
import { enableCompileCache, flushCompileCache } from "node:module";
import { join } from "node:path";

// Every run gets a fresh worker process (started before the run, while the host waits for work): V8's
// code cache for our modules and zod (in the state dir the host passes) saves a good part of its
// start-up. It has to be on before they load, hence the dynamic import.
const stateDir = process.env.PIW_HOME;
enableCompileCache(stateDir ? join(stateDir, "compile-cache") : undefined);
const { runWorkerProcess } = await import("@piw/worker");
// Written now, while the host waits for our hello, rather than when the process exits.
flushCompileCache();
await runWorkerProcess();
