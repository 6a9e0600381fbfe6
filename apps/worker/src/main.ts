#!/usr/bin/env node
// piw-worker: spawned by the piw host, one per run command. See @piw/worker for the process contract.
import { enableCompileCache, flushCompileCache } from "node:module";
import { join } from "node:path";

// Every run starts a fresh worker: V8's code cache for our modules and zod (in the state dir the host
// passes) saves a good part of the start-up. It has to be on before they load, hence the dynamic import.
const stateDir = process.env.PIW_HOME;
enableCompileCache(stateDir ? join(stateDir, "compile-cache") : undefined);
const { runWorkerProcess } = await import("@piw/worker");
// Written now, while the host waits for our hello, rather than when the process exits.
flushCompileCache();
await runWorkerProcess();
