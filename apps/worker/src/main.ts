#!/usr/bin/env node
// piw-worker: spawned by the piw host, one per run command. See @piw/worker for the process contract.
import { runWorkerProcess } from "@piw/worker";

await runWorkerProcess();
