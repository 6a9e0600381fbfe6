#!/usr/bin/env node
// piw-host: check Node before anything that needs 22.19 loads, then run the host (host-process.ts).
import { exitUnlessNodeFits } from "@piw/node-version";

exitUnlessNodeFits("piw-host");
await import("./host-process.js");
