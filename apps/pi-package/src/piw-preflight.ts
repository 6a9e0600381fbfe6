#!/usr/bin/env node
// The preflight child entry of the published package: apps/worker's own entry, which checks Node first.
import "../../worker/src/preflight.js";
