#!/usr/bin/env node
// The Herdr plugin's pane (herdr-plugin.toml): the viewer on the run `/piw` named in PIW_HERDR_RUN_ID,
// as `piw view <runId>` in this process; without one it opens the run list.
import { PIW_ENV } from "@piw/state-dir";

const runId = process.env[PIW_ENV.herdrRunId.name];
process.argv.splice(2, process.argv.length, "view", ...(runId ? [runId] : []));
await import("../../piw/src/main.js");
