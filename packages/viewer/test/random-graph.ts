import type { GraphManifest, NodeView } from "@piw/protocol";
import { manifestNode, runViewOf } from "./run-view-fixture.js";

/** mulberry32: a small seeded generator, so every failing graph can be rebuilt from its seed. */
function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

const KINDS: NodeView["kind"][] = ["agent", "compute", "shell", "action", "notify", "checkpoint", "decision"];
const WORDS = ["accept", "revise", "retry", "skip", "again", "ok", "fail", "left", "right", "more"];

/**
 * A random workflow graph: a spine that reaches every node, decisions with labeled branches to any
 * node (loops and self-loops included), extra jumps, includes (one nested), and several exits.
 */
function randomManifest(seed: number, maxNodes = 24): GraphManifest {
  const random = seededRandom(seed);
  const int = (n: number) => Math.floor(random() * n);
  const pick = <T>(items: readonly T[]): T => items[int(items.length)] as T;

  const mounts: GraphManifest["mounts"] = [];
  const paths: string[] = [];
  const rootCount = 2 + int(maxNodes / 2);
  for (let i = 0; i < rootCount; i += 1) paths.push(`step${i}`);
  const mountCount = int(3);
  for (let m = 0; m < mountCount; m += 1) {
    const mount = `inc${m}`;
    const inner: string[] = [];
    for (let i = 0; i < 1 + int(3); i += 1) inner.push(`${mount}/part${i}`);
    if (random() < 0.4) {
      const nested = `${mount}/deep`;
      inner.push(`${nested}/leaf`);
      mounts.push({
        path: nested,
        name: "deep",
        scope: mount,
        workflow: "leafy",
        title: "deep",
        startPath: `${nested}/leaf`,
        exits: ["out"],
      });
    }
    mounts.push({
      path: mount,
      name: mount,
      scope: "",
      workflow: `child${m}`,
      title: mount,
      startPath: inner[0] as string,
      exits: ["ready"],
    });
    paths.splice(1 + int(paths.length - 1), 0, ...inner);
  }
  const nodes = paths.map((path) => manifestNode(path, pick(KINDS)));
  const exits = random() < 0.3 ? ["done", "halt"] : ["done"];
  const edges: GraphManifest["edges"] = [];
  const target = (i: number): GraphManifest["edges"][number]["to"] =>
    i >= paths.length ? { kind: "exit", exit: pick(exits) } : { kind: "node", path: paths[i] as string };
  paths.forEach((path, i) => {
    const node = nodes[i] as GraphManifest["nodes"][number];
    if (node.kind === "decision") {
      const branches = 2 + int(2);
      const used = new Set<string>();
      for (let b = 0; b < branches; b += 1) {
        let label = pick(WORDS);
        while (used.has(label)) label = `${label}${b}`;
        used.add(label);
        // The first branch keeps the spine going; the others go anywhere, back included.
        edges.push({ from: path, to: b === 0 ? target(i + 1) : target(int(paths.length + 1)), label });
      }
      return;
    }
    edges.push({ from: path, to: target(i + 1) });
    if (random() < 0.2) edges.push({ from: path, to: target(i + 2 + int(paths.length)) });
  });
  return {
    version: 1,
    workflow: `random${seed}`,
    startPath: paths[0] as string,
    exits,
    maxSteps: 1000,
    nodes,
    mounts,
    edges,
  };
}

/** The manifest's view with random saved states, so cards carry every kind of status text. */
export function randomView(seed: number, maxNodes = 24) {
  const manifest = randomManifest(seed, maxNodes);
  const random = seededRandom(seed ^ 0x5eed);
  const states: NodeView["state"][] = ["pending", "running", "succeeded", "failed", "timed_out"];
  const view = runViewOf(manifest);
  return {
    ...view,
    nodes: view.nodes.map((node) => {
      const state = states[Math.floor(random() * states.length)] as NodeView["state"];
      if (state === "pending") return node;
      return {
        ...node,
        state,
        visits: 1 + Math.floor(random() * 4),
        attempt: 1 + Math.floor(random() * 2),
        startedAt: 0,
        finishedAt: state === "running" ? null : Math.floor(random() * 100_000),
        errorCode: state === "failed" ? "node_failed" : null,
      };
    }),
  };
}
