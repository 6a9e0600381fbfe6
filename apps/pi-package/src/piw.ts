#!/usr/bin/env node
// The `piw` bin of the published package: apps/piw's own entry, which checks Node first.
import "../../piw/src/main.js";
