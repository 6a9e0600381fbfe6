#!/usr/bin/env node
// piw preflight child: check Node before anything that needs 22.19 loads, then serve (preflight-process.ts).
import { exitUnlessNodeFits } from "@piw/node-version";
import { defaultStateDir, useStateCompileCache } from "@piw/state-dir";

exitUnlessNodeFits("piw-preflight");
// Before the modules load: a start after the first one reuses their compiled code (see useStateCompileCache).
useStateCompileCache(defaultStateDir(process.env));
await import("./preflight-process.js");
