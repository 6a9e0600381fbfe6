#!/usr/bin/env node
// The worker entry of the published package: apps/worker's own entry, which checks Node first.
import "../../worker/src/main.js";
