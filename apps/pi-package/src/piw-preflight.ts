#!/usr/bin/env node
// The preflight child entry of the published package: check Node first, then load it (apps/worker).
import { exitUnlessNodeFits } from "./node-version.js";

exitUnlessNodeFits("piw-preflight");
await import("../../worker/src/preflight.js");
