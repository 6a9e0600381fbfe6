#!/usr/bin/env node
// piw preflight child: check Node before anything that needs 22.19 loads, then serve (preflight-process.ts).
import { exitUnlessNodeFits } from "@piw/node-version";

exitUnlessNodeFits("piw-preflight");
await import("./preflight-process.js");
