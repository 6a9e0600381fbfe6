#!/usr/bin/env node
// The worker entry of the published package: check Node first, then load the worker (apps/worker).
import { exitUnlessNodeFits } from "./node-version.js";

exitUnlessNodeFits("piw-worker");
await import("../../worker/src/main.js");
