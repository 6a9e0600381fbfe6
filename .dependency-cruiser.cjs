// Boundary rules of docs/maintainers/architecture.md ("Packages and who may import what"). `pnpm boundaries`
// runs them over packages/ and apps/; tools/boundaries/test proves every rule fires on the fixture tree in
// tools/boundaries/fixtures and checks that page's tables against them.
const { join } = require("node:path");

/**
 * A module-path pattern for npm packages, matching both a resolved file (`…/node_modules/<name>/…`,
 * also through pnpm's `.pnpm/` store and `@types/`) and an unresolved specifier (`<name>`), so a rule
 * fires whether or not the package is installed where the import sits.
 */
function npmPackages(...names) {
  return `(^|(^|/)node_modules/)(@types/)?(${names.join("|")})(/|$)`;
}

/** A workspace package, by folder or, if `@piw/<name>` did not resolve, by specifier. */
function workspacePackages(...names) {
  return `^(packages/(${names.join("|")})/|@piw/(${names.join("|")})(/|$))`;
}

// Any SQLite binding: better-sqlite3, sqlite3, sqlite, node:sqlite, wa-sqlite, @sqlite.org/*, libsql, sql.js.
const sqliteBindings = `(^|(^|/)node_modules/)(@types/)?(node:)?([^/]*sqlite[^/]*|@[^/]*sqlite[^/]*/[^/]+|@libsql/[^/]+|libsql|sql\\.js)(/|$)`;
const piAgentPackages = npmPackages(
  "@earendil-works/pi-coding-agent",
  "@earendil-works/pi-ai",
  "@earendil-works/pi-agent-core",
);

/** @type {import("dependency-cruiser").IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: "sqlite-only-in-store",
      severity: "error",
      comment:
        "Only packages/store touches SQLite: it owns the schema and every durable transition, and only the " +
        "host process opens the database for writing. Call a typed @piw/store reader or transition instead " +
        "(from host or embedded), or ask the host over @piw/client.",
      from: { pathNot: "^packages/store/" },
      to: { path: sqliteBindings },
    },
    {
      name: "identity-only-in-engine",
      severity: "error",
      comment:
        "Execution identities (node visits, effects) are branded types that only the engine constructs, so " +
        "that a crash retry keeps the same identity. Do not import the engine's identity module; take " +
        "identities from the engine's results and pass them along as values.",
      from: { pathNot: "^packages/engine/" },
      to: { path: "^(packages|@piw)/engine/src/.*identity" },
    },
    {
      name: "no-package-imports-app",
      severity: "error",
      comment:
        "Apps are process entries that compose packages; a package that imports an app inverts that. Move " +
        "the shared code into the package that owns it and let the app import it from there.",
      from: { path: "^packages/" },
      to: { path: "^apps/" },
    },
    {
      name: "no-circular",
      severity: "error",
      comment:
        "A cycle makes load order matter and ties modules that should change apart. Move what both sides " +
        "need into a third module that both import, or pass it in as a parameter.",
      from: {},
      to: { circular: true },
    },
    {
      name: "package-imports-public-entry",
      severity: "error",
      comment:
        "packages/<x>/src/index.ts is a package's whole public surface. Import `@piw/x` instead of a file " +
        "inside it; if what you need is not exported, export it from that index (or ask its owner). If " +
        "`@piw/x` resolved into dist/, add it to the paths in tsconfig.base.json.",
      from: { path: "^packages/([^/]+)/" },
      to: {
        path: "^packages/[^/]+/",
        pathNot: [
          "^packages/$1/",
          "^packages/[^/]+/src/index\\.ts$",
          "^packages/[^/]+/src/testing\\.ts$",
          "^packages/engine/src/authoring/index\\.ts$",
        ],
      },
    },
    {
      name: "app-imports-public-entry",
      severity: "error",
      comment:
        "Apps use packages only through their public entry. Import `@piw/x` instead of a file inside " +
        "packages/x; if what you need is not exported, export it from packages/x/src/index.ts. The " +
        "authoring API is the public entry `piw` (tsconfig paths), which the published package re-exports. " +
        "The engine's second public entry, `@piw/engine/launcher`, is its preflight launcher alone.",
      from: { path: "^apps/" },
      to: {
        path: "^packages/",
        pathNot: [
          "^packages/[^/]+/src/index\\.ts$",
          "^packages/engine/src/authoring/index\\.ts$",
          "^packages/engine/src/launcher\\.ts$",
          "^packages/[^/]+/src/testing\\.ts$",
        ],
      },
    },
    {
      name: "no-piw-subpath-import",
      severity: "error",
      comment:
        "`@piw/x/src/...` (or any other `@piw/x/` subpath) reaches past a package's public entry. Import " +
        "from `@piw/x` and export what you need from packages/x/src/index.ts.",
      from: {},
      to: { path: "^@piw/[^/]+/" },
    },
    {
      name: "pi-agent-only-in-extension",
      severity: "error",
      comment:
        "Only packages/extension (Pi's own process) and packages/pi-agent (isolated agent steps in Pi SDK " +
        "sessions, for the worker) talk to Pi (pi-coding-agent, pi-ai, pi-agent-core), so the rest of piw " +
        "runs without Pi loaded. Put Pi-facing code in one of those two and hand the rest plain piw types.",
      from: { pathNot: "^packages/(extension|pi-agent)/" },
      to: { path: piAgentPackages },
    },
    {
      name: "pi-agent-only-from-worker",
      severity: "error",
      comment:
        "packages/pi-agent opens Pi SDK sessions, which run a model with tools: only the worker (one run " +
        "command, workflow code already loaded) may do that, and the worker app's preflight entry may ask it " +
        "for the model check. The host, store and engine never load Pi; the engine drives a session only " +
        "through its IsolatedAgentSessions interface and checks models through ModelCheck, both filled by the worker app.",
      from: { path: "^(packages|apps)/", pathNot: "^(packages/(worker|pi-agent)|apps/worker)/" },
      to: { path: workspacePackages("pi-agent") },
    },
    {
      name: "pi-tui-only-in-viewer-or-extension",
      severity: "error",
      comment:
        "Pi's TUI library belongs to the renderers: packages/viewer (and the extension's widget). Render " +
        "through @piw/viewer instead of importing @earendil-works/pi-tui.",
      from: { pathNot: "^packages/(viewer|extension)/" },
      to: { path: npmPackages("@earendil-works/pi-tui") },
    },
    {
      name: "protocol-imports-only-zod",
      severity: "error",
      comment:
        "packages/protocol is the schemas every process shares; it must load anywhere, so it imports zod " +
        "and its own files only — no node built-ins, no other package. Move I/O to the package that uses " +
        "the schema.",
      from: { path: "^packages/protocol/src/" },
      to: { pathNot: ["^packages/protocol/", npmPackages("zod")] },
    },
    {
      name: "state-dir-imports-only-node",
      severity: "error",
      comment:
        "packages/state-dir holds the state directory's rules (paths, owner and mode checks, no-follow opens, " +
        "process liveness) in one place for client, host and store, so it must stay a leaf all three can " +
        "import: Node's built-ins and its own files only. Keep what needs protocol or store types in the " +
        "package that uses it, and pass plain values in.",
      from: { path: "^packages/state-dir/src/" },
      to: { pathNot: "^packages/state-dir/", dependencyTypesNot: ["core"] },
    },
    {
      name: "builtins-import-only-authoring",
      severity: "error",
      comment:
        "packages/builtins holds the workflows piw ships, written as any user writes one: with the public " +
        "authoring API (`piw`) and zod, nothing else. If a built-in needs more, add it to the authoring API " +
        "for every author (with its node page) instead of reaching into the engine or Node from here.",
      from: { path: "^packages/builtins/src/" },
      to: {
        pathNot: [
          "^packages/builtins/",
          "^(packages/engine/src/authoring/index\\.ts|piw)$",
          npmPackages("zod"),
        ],
      },
    },
    {
      name: "store-only-from-host-or-embedded",
      severity: "error",
      comment:
        "The state database has one writer: the host (packages/host, wired up by apps/host) — or " +
        "packages/embedded, which runs without a host. Everyone else (viewer, extension, worker, engine, " +
        "client, other apps) goes through the host with @piw/client. A package's own tests (test/) may open a " +
        "store to play the host's side of a real process boundary.",
      from: {
        path: "^(packages|apps)/",
        pathNot: ["^(packages/(store|host|embedded)|apps/host)/", "^(packages|apps)/[^/]+/test/"],
      },
      to: { path: workspacePackages("store") },
    },
    {
      name: "host-never-imports-engine",
      severity: "error",
      comment:
        "The host never executes workflow code, so a broken workflow can crash a worker and never the " +
        "host. Run workflows in a worker (@piw/worker) and send the host only protocol messages. The " +
        "host's own tests (test/) may compile workflows with the engine to prepare runs, as a client would.",
      from: { path: "^(packages|apps)/host/", pathNot: "^(packages|apps)/host/test/" },
      to: { path: workspacePackages("engine") },
    },
    {
      name: "engine-launcher-never-loads-workflows",
      severity: "error",
      comment:
        "`@piw/engine/launcher` (packages/engine/src/launcher.ts) is what the CLI's `piw run` loads to ask " +
        "the preflight child for a launch: workflow code runs only in that child, and the CLI starts in a " +
        "fraction of the full engine's load time. The launcher's files never reach the loader, compiler, " +
        "executor or authoring API; put what it needs beside it (launch/launch-refused.ts) instead.",
      from: {
        path: "^packages/engine/src/(launcher|preflight/evaluate-preflight|launch/launch-refused)\\.ts$",
      },
      to: { path: "^packages/engine/src/(loader|compiler|executor|authoring|identity)/" },
    },
    {
      name: "no-package-imports-embedded",
      severity: "error",
      comment:
        "packages/embedded is the one package that combines engine and store in-process; it is for Node " +
        "programs, apps, tools and tests, never for other packages. Depend on @piw/engine or the host instead.",
      from: { path: "^packages/", pathNot: "^packages/embedded/" },
      to: { path: workspacePackages("embedded") },
    },
    {
      name: "test-kit-only-in-tests",
      severity: "error",
      comment:
        "packages/test-kit holds the shared test harnesses (the fake model, the real Pi driven by a test, " +
        "host and worker processes from source, waitFor): test code that must never ship or run in a user's " +
        "process. Only test/ folders (and tools/bench, tools/soak, tests/) may import @piw/test-kit; move " +
        "what src/ needs into the package that owns it.",
      from: {
        path: "^(packages|apps)/",
        pathNot: ["^packages/test-kit/", "^(packages|apps)/[^/]+/test/"],
      },
      to: { path: workspacePackages("test-kit") },
    },
    {
      name: "testing-entry-only-for-entries-and-tests",
      severity: "error",
      comment:
        "`@piw/x/testing` (packages/x/src/testing.ts) holds benchmark and fault-test knobs (SQLite's " +
        "synchronous mode, group commit off, crash hooks) that no user-facing API may offer. Only process " +
        "entries (apps/*/src, which read them from PIW_* variables), test/ folders, tools/bench and " +
        "tools/soak import it, and another package's testing entry that passes a knob on (@piw/host/testing " +
        "opens the store through @piw/store/testing); a package's src/ takes what it needs as a parameter " +
        "from its caller.",
      from: {
        path: "^(packages|apps)/",
        pathNot: ["^apps/[^/]+/src/", "^(packages|apps)/[^/]+/test/", "^packages/[^/]+/src/testing\\.ts$"],
      },
      to: { path: ["^packages/[^/]+/src/testing\\.ts$", "^@piw/[^/]+/testing$"] },
    },
    {
      name: "no-package-imports-tools",
      severity: "error",
      comment:
        "tools/ holds dev-only scripts (benchmarks, checks) that are never published. Shipped code must not " +
        "depend on them: move what you need into the package that owns it.",
      from: { path: "^(packages|apps)/" },
      to: { path: "^tools/" },
    },
  ],
  options: {
    // Not crawled, but kept as leaves so an import of an npm package or of another package's dist/ still
    // shows up as a dependency the rules can match (`exclude` would hide it).
    doNotFollow: { path: "(^|/)(node_modules|dist)/" },
    tsPreCompilationDeps: true,
    // `@piw/x` resolves to packages/x/src/index.ts through tsconfig paths, before any build. The
    // boundaries test points this at its fixture tree.
    tsConfig: { fileName: process.env.PIW_DEPCRUISE_TSCONFIG ?? join(__dirname, "tsconfig.base.json") },
    enhancedResolveOptions: {
      exportsFields: ["exports"],
      conditionNames: ["import", "require", "node", "default", "types"],
      mainFields: ["module", "main", "types", "typings"],
    },
    skipAnalysisNotInRules: true,
  },
};
