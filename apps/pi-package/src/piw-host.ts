#!/usr/bin/env node
// The host entry of the published package: check Node first, then load the host (apps/host).
import { exitUnlessNodeFits } from "./node-version.js";

exitUnlessNodeFits("piw-host");
await import("../../host/src/main.js");
