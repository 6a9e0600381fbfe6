#!/usr/bin/env node
// piw-host: check Node before anything that needs 22.19 loads, then run the host (host-process.ts).
import { exitUnlessNodeFits } from "@piw/node-version";
import { defaultStateDir, useStateCompileCache } from "@piw/state-dir";

exitUnlessNodeFits("piw-host");
// Before the modules load: a start after the first one reuses their compiled code (see useStateCompileCache).
useStateCompileCache(defaultStateDir(process.env));
await import("./host-process.js");
