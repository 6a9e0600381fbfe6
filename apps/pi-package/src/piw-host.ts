#!/usr/bin/env node
// The host entry of the published package: apps/host's own entry, which checks Node first.
import "../../host/src/main.js";
