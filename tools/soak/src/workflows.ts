import { writeFileSync } from "node:fs";
import { join } from "node:path";

// The soak's workflows, written as source files to its scratch folder: a chain of node kinds in
// turn, a parallel one whose branches run those kinds side by side, and a map one that runs a chain
// of them once per item. Every action performs one
// idempotent managed effect that writes a ledger line (run, node, visit, start time) before its work,
// so an execution that a kill cut short is counted too. Every compute slot of a chain is a run of pure
// steps (computes and decisions, SOAK_PURE long in the chain workflow), which the engine pipelines. Every shell and action node has a deadline
// (SOAK_DEADLINE_MS) shorter than the time the soak leaves a run parked before it resumes it.

/** The lines every workflow file starts with; `DEFAULTS` gives its shell and action nodes a deadline. */
const prelude = (deadlineMs: number) => [
  'import { appendFileSync } from "node:fs";',
  'import { action, compute, decision, decisionEdge, defineWorkflow, map, parallel, shell, wait, type ActionContext } from "piw";',
  'import { z } from "zod";',
  "",
  "type Input = { tag: string; ledger: string };",
  "const input = z.object({ tag: z.string(), ledger: z.string() });",
  "",
  "/** Writes the ledger line before the effect's work, so an execution cut short is counted too. */",
  "const step = ({ input, node, effects }: ActionContext<Input>) =>",
  '  effects.idempotent("soak.effect", { tag: input.tag, path: node.path }, async () => {',
  "    const startedAt = Date.now();",
  '    appendFileSync(input.ledger, JSON.stringify({ tag: input.tag, path: node.path, visit: node.visit, startedAt }) + "\\n");',
  "    await new Promise((done) => setTimeout(done, 10 + Math.floor(Math.random() * 60)));",
  "    return { startedAt };",
  "  });",
  "",
  "/** Fails the first attempt of each visit (a flag file marks it), then sleeps and succeeds. */",
  "const flakyOnce = (seconds: number) => ({ input, node }: { input: Input; node: { path: string; visit: number } }) => [",
  '  "sh", "-c", \'f="$1.$2"; test -e "$f" || { : > "$f"; exit 1; }; sleep "$3"\', "soak",',
  '  input.ledger, [input.tag, node.path.replace(/\\W/g, "_"), node.visit].join("-"), String(seconds),',
  "];",
  "const RETRY = { attempts: 4, backoff: { initialMs: 100, factor: 2, maxMs: 1_000 } };",
  `const DEFAULTS = { timeoutMs: { shell: ${deadlineMs}, action: ${deadlineMs} } };`,
  "",
];

/** The node kinds of the chain, in turn; each action saves one effect. */
const KINDS = ["action", "shell", "compute", "wait"] as const;

/** One node of a chain: `[name, node source, edge source]`. */
type ChainNode = [string, string, (next: string) => string];

function chainNodes(index: number, name: string, pure: number): ChainNode[] {
  const kind = KINDS[index % KINDS.length];
  const plain = (source: string): ChainNode[] => [[name, source, (next) => `{ to: "${next}" }`]];
  if (kind === "action") return plain("action({ run: step })");
  if (kind === "shell") return plain("shell({ exec: flakyOnce(0.05), retry: RETRY })");
  if (kind === "wait") return plain("wait({ ms: 150 })");
  // A run of pure steps: computes that pass a count on, every fifth a decision.
  return Array.from({ length: pure }, (_, j): ChainNode => {
    const own = j === 0 ? name : `${name}_${j}`;
    if (j % 5 === 4)
      return [
        own,
        'decision({ choices: ["on"], decide: () => "on" })',
        (next) => `decisionEdge({ on: "${next}" })`,
      ];
    return [own, "compute({ run: ({ node }) => node.visit })", (next) => `{ to: "${next}" }`];
  });
}

/** A chain of `nodes` nodes named `<prefix>0…` (each compute slot `pure` steps long), as a `defineWorkflow` call. */
function chain(name: string, prefix: string, nodes: number, offset = 0, pure = 3): string[] {
  const lines = [
    `defineWorkflow({`,
    `  name: "${name}",`,
    "  input,",
    "  defaults: DEFAULTS,",
    `  startAt: "${prefix}0",`,
    "  nodes: {",
  ];
  const all = Array.from({ length: nodes }, (_, i) => chainNodes(i + offset, `${prefix}${i}`, pure)).flat();
  for (const [own, source] of all) lines.push(`    ${own}: ${source},`);
  lines.push("  },", "  edges: {");
  all.forEach(([own, , edge], i) => {
    lines.push(`    ${own}: ${edge(all[i + 1]?.[0] ?? "done")},`);
  });
  lines.push("  },", "})");
  return lines;
}

/** The chain workflow: `nodes` nodes, a quarter of them actions and a quarter runs of `pure` pure steps. */
export function writeChainWorkflow(root: string, nodes: number, deadlineMs: number, pure: number): string {
  const lines = [
    ...prelude(deadlineMs),
    `export default ${chain("soak", "n", nodes, 0, pure).join("\n")};`,
    "",
  ];
  const file = join(root, "soak.workflow.ts");
  writeFileSync(file, lines.join("\n"));
  return file;
}

/**
 * The parallel workflow: an action, then a parallel node joined on all of its four branches (two
 * chains of every kind, a slow flaky command, an action; at most three at once), then a parallel node
 * joined on any (a compute that wins against a two-second command, which is cancelled), then an
 * action. Kills land while branches are in flight.
 */
export function writeParallelWorkflow(root: string, deadlineMs: number): string {
  const lines = [
    ...prelude(deadlineMs),
    `const left = ${chain("soak-left", "l", 4).join("\n")};`,
    "",
    `const right = ${chain("soak-right", "r", 4, 2).join("\n")};`,
    "",
    "export default defineWorkflow({",
    '  name: "soak-parallel",',
    "  input,",
    "  defaults: DEFAULTS,",
    '  startAt: "pre",',
    "  nodes: {",
    "    pre: action({ run: step }),",
    "    fan: parallel({",
    "      branches: {",
    "        left,",
    "        right,",
    "        slow: shell({ exec: flakyOnce(0.4), retry: RETRY }),",
    "        one: action({ run: step }),",
    "      },",
    '      join: "all",',
    "      concurrency: 3,",
    "    }),",
    "    race: parallel({",
    '      branches: { quick: compute({ run: () => "quick" }), late: shell({ exec: ["sleep", "2"] }) },',
    '      join: "any",',
    "    }),",
    "    post: action({ run: step }),",
    "  },",
    '  edges: { pre: { to: "fan" }, fan: { to: "race" }, race: { to: "post" }, post: { to: "done" } },',
    "});",
    "",
  ];
  const file = join(root, "soak-parallel.workflow.ts");
  writeFileSync(file, lines.join("\n"));
  return file;
}

/** Branches a join `any` may leave unfinished: their node is cancelled (or never ran), not succeeded. */
export const RACE_LOSERS = new Set(["race/late/late"]);

/** How many items the map workflow's `fan` runs its chain for. */
const MAP_ITEMS = 5;

/**
 * The map workflow: an action, then a map node over MAP_ITEMS items (each item a chain of every kind,
 * at most three at once, joined on all), then a map node over two items joined on any (item 0's
 * command ends at once, item 1's sleeps two seconds and is cancelled), then an action. Kills land
 * while items' branches are in flight.
 */
export function writeMapWorkflow(root: string, deadlineMs: number): string {
  const lines = [
    ...prelude(deadlineMs),
    `const item = ${chain("soak-item", "i", 4, 1).join("\n")};`,
    "",
    "const copies = (n: number) => ({ input }: { input: Input }) => Array.from({ length: n }, () => input);",
    "",
    "export default defineWorkflow({",
    '  name: "soak-map",',
    "  input,",
    "  defaults: DEFAULTS,",
    '  startAt: "pre",',
    "  nodes: {",
    "    pre: action({ run: step }),",
    `    fan: map({ over: copies(${MAP_ITEMS}), branch: item, join: "all", concurrency: 3 }),`,
    "    race: map({",
    "      over: copies(2),",
    '      branch: shell({ exec: ({ mapIndex }) => ["sleep", mapIndex === 0 ? "0" : "2"] }),',
    '      join: "any",',
    "    }),",
    "    post: action({ run: step }),",
    "  },",
    '  edges: { pre: { to: "fan" }, fan: { to: "race" }, race: { to: "post" }, post: { to: "done" } },',
    "});",
    "",
  ];
  const file = join(root, "soak-map.workflow.ts");
  writeFileSync(file, lines.join("\n"));
  return file;
}

/** The map workflow's join `any` loser: item 1's command, cancelled (or never finished). */
export const MAP_RACE_LOSERS = new Set(["race/1/race"]);

/** The concrete paths of a completed run of the map workflow: each `each` segment as every item. */
export function mapRunPaths(templates: readonly string[]): string[] {
  return templates.flatMap((path) => {
    if (path.startsWith("fan/each/")) {
      return Array.from({ length: MAP_ITEMS }, (_, i) => path.replace("fan/each/", `fan/${i}/`));
    }
    if (path.startsWith("race/each/")) return [0, 1].map((i) => path.replace("race/each/", `race/${i}/`));
    return [path];
  });
}
