#!/usr/bin/env node
// The `piw` bin of the published package: check Node first, then load the CLI (apps/piw).
import { exitUnlessNodeFits } from "./node-version.js";

exitUnlessNodeFits("piw");
await import("../../piw/src/main.js");
