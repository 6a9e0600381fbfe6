#!/usr/bin/env node
// piw-worker: check Node before anything that needs 22.19 loads, then run the worker (worker-process.ts).
import { exitUnlessNodeFits } from "@piw/node-version";

exitUnlessNodeFits("piw-worker");
await import("./worker-process.js");
