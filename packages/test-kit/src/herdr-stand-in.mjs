#!/usr/bin/env node
// A stand-in for `herdr` (Herdr cannot be installed here): the commands of Herdr 0.7's documented CLI
// that piw uses, over a JSON state file, each call appended to a log. Not Herdr: a plugin pane's
// program runs only when a test gives it a tmux server (runPane).
// HERDR_STAND_IN_DIR names the folder of `state.json` and `calls.jsonl`.
import { execFileSync } from "node:child_process";
import { appendFileSync, existsSync, readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";

const dir = process.env.HERDR_STAND_IN_DIR;
if (!dir) fail("HERDR_STAND_IN_DIR is not set");
const statePath = join(dir, "state.json");
const args = process.argv.slice(2);
appendFileSync(join(dir, "calls.jsonl"), `${JSON.stringify({ args })}\n`);

const state = existsSync(statePath)
  ? JSON.parse(readFileSync(statePath, "utf8"))
  : {
      plugins: [],
      panes: [{ pane_id: "1-1", tab_id: "1:1", workspace_id: "1", label: null, env: {} }],
      next: 2,
    };

function save() {
  writeFileSync(statePath, `${JSON.stringify(state, null, 2)}\n`);
}
function reply(result) {
  process.stdout.write(`${JSON.stringify({ result })}\n`);
}
function fail(message, code = 1) {
  process.stderr.write(`error: ${message}\n`);
  process.exit(code);
}
/** The values of every `--name value` in the arguments. */
function options(name) {
  const values = [];
  for (let i = 0; i < args.length; i += 1) if (args[i] === name) values.push(args[i + 1]);
  return values;
}
function option(name) {
  return options(name)[0];
}
function pane(id) {
  return state.panes.find((p) => p.pane_id === id) ?? fail(`pane ${id} not found`);
}
function publicPane(p) {
  return { pane_id: p.pane_id, tab_id: p.tab_id, workspace_id: p.workspace_id, label: p.label };
}
function manifestField(text, key) {
  const top = text.split(/^\s*\[/m, 1)[0];
  const match = new RegExp(`^${key}\\s*=\\s*("[^"]*")`, "m").exec(top);
  return match ? JSON.parse(match[1]) : undefined;
}
function newPane(tab, workspace, env) {
  const id = state.next++;
  const created = {
    pane_id: `${workspace}-${id}`,
    tab_id: tab ?? `${workspace}:${id}`,
    workspace_id: workspace,
    label: null,
    env,
  };
  state.panes.push(created);
  return created;
}

/**
 * With HERDR_STAND_IN_TMUX (a tmux server's socket name, with a session `herdr`), the pane's program
 * really runs, as Herdr would run it: in the plugin's root, with the pane's variables, in a window
 * named `pane-<id>`.
 */
function runPane(created, root, argv) {
  const server = process.env.HERDR_STAND_IN_TMUX;
  if (!server) return;
  const quote = (word) => `'${String(word).replaceAll("'", "'\\''")}'`;
  const env = { ...created.env, HERDR_ENV: "1", HERDR_PANE_ID: created.pane_id };
  const line = ["env", ...Object.entries(env).map(([k, v]) => `${k}=${v}`), ...argv].map(quote).join(" ");
  execFileSync("tmux", [
    "-L",
    server,
    "new-window",
    "-d",
    "-t",
    "herdr",
    "-n",
    `pane-${created.pane_id}`,
    "-c",
    root,
    line,
  ]);
}

const [group, verb, ...rest] = args;
const command = `${group} ${verb ?? ""}`.trim();
switch (command) {
  case "--version":
    process.stdout.write("herdr 0.7.0 (stand-in)\n");
    break;
  case "plugin list": {
    const id = option("--plugin");
    reply({ plugins: state.plugins.filter((p) => id === undefined || p.plugin_id === id) });
    break;
  }
  case "plugin link": {
    const root = resolve(rest[0] ?? fail("plugin link needs a path"));
    const manifestPath = join(root, "herdr-plugin.toml");
    if (!existsSync(manifestPath)) fail(`no herdr-plugin.toml in ${root}`);
    const text = readFileSync(manifestPath, "utf8");
    const id = manifestField(text, "id");
    if (state.plugins.some((p) => p.plugin_id === id)) fail(`plugin ${id} is already linked`);
    const plugin = {
      plugin_id: id,
      plugin_root: root,
      manifest_path: manifestPath,
      version: manifestField(text, "version"),
      enabled: !args.includes("--disabled"),
      panes: Object.fromEntries(
        text
          .split(/^\[\[panes\]\]\s*$/m)
          .slice(1)
          .map((block) => [
            manifestField(block, "id"),
            JSON.parse(/^command\s*=\s*(\[.*\])\s*$/m.exec(block)?.[1] ?? "null"),
          ]),
      ),
    };
    state.plugins.push(plugin);
    save();
    reply({ plugin });
    break;
  }
  case "plugin unlink":
  case "plugin enable": {
    const plugin = state.plugins.find((p) => p.plugin_id === rest[0]) ?? fail(`plugin ${rest[0]} not found`);
    if (verb === "unlink") state.plugins = state.plugins.filter((p) => p !== plugin);
    else plugin.enabled = true;
    save();
    reply({ plugin });
    break;
  }
  case "plugin pane": {
    const [action, target] = rest;
    if (action === "focus") {
      state.focused = pane(target).pane_id;
      save();
      reply({ pane: publicPane(pane(target)) });
      break;
    }
    if (action !== "open") fail(`unknown plugin pane command ${action}`, 2);
    const plugin = state.plugins.find((p) => p.plugin_id === option("--plugin"));
    if (!plugin?.enabled) fail(`plugin ${option("--plugin")} is not enabled`);
    const paneCommand =
      plugin.panes[option("--entrypoint")] ?? fail(`plugin has no pane ${option("--entrypoint")}`);
    const env = Object.fromEntries(
      options("--env").map((pair) => [pair.slice(0, pair.indexOf("=")), pair.slice(pair.indexOf("=") + 1)]),
    );
    let created;
    if (option("--placement") === "split") {
      const beside = pane(option("--target-pane"));
      if (!["right", "down"].includes(option("--direction"))) fail("--direction must be right or down", 2);
      created = newPane(beside.tab_id, beside.workspace_id, env);
    } else if (option("--placement") === "tab") {
      const workspace = option("--workspace") ?? fail("--workspace is required", 2);
      created = newPane(undefined, workspace, env);
    } else fail("--placement must be split, tab or overlay", 2);
    if (args.includes("--focus")) state.focused = created.pane_id;
    save();
    runPane(created, plugin.plugin_root, paneCommand);
    reply({
      plugin_pane: {
        plugin_id: plugin.plugin_id,
        entrypoint: option("--entrypoint"),
        pane: publicPane(created),
      },
    });
    break;
  }
  case "pane list":
    reply({ panes: state.panes.map(publicPane) });
    break;
  case "pane get":
    reply({ pane: publicPane(pane(rest[0])) });
    break;
  case "pane rename":
    pane(rest[0]).label = rest[1] ?? fail("pane rename needs a label", 2);
    save();
    reply({ pane: publicPane(pane(rest[0])) });
    break;
  case "pane swap": {
    const a = pane(option("--source-pane"));
    const b = pane(option("--target-pane"));
    state.panes = state.panes.map((p) => (p === a ? b : p === b ? a : p));
    save();
    reply({});
    break;
  }
  case "workspace create": {
    const workspace = String(state.next++);
    const root = newPane(undefined, workspace, {});
    state.workspaces = [...(state.workspaces ?? []), { workspace_id: workspace, label: option("--label") }];
    save();
    reply({ workspace: { workspace_id: workspace, label: option("--label") }, root_pane: publicPane(root) });
    break;
  }
  case "tab close":
    state.panes = state.panes.filter((p) => p.tab_id !== rest[0]);
    save();
    reply({});
    break;
  default:
    fail(`unknown command: ${command}`, 2);
}
