import type { GraphManifest, NodeView, RunView } from "@piw/protocol";

/** A manifest node in the compiler's shape: name is the last path segment, scope its folder. */
export function manifestNode(path: string, kind: NodeView["kind"]): GraphManifest["nodes"][number] {
  const cut = path.lastIndexOf("/");
  const name = path.slice(cut + 1);
  return { path, name, scope: cut < 0 ? "" : path.slice(0, cut), kind, title: name };
}

function pendingNode(path: string, kind: NodeView["kind"]): NodeView {
  return {
    path,
    kind,
    title: path.slice(path.lastIndexOf("/") + 1),
    state: "pending",
    visits: 0,
    attempt: 0,
    startedAt: null,
    finishedAt: null,
    errorCode: null,
  };
}

/** A run view of `manifest` with every node pending; tests override what they need. */
export function runViewOf(manifest: GraphManifest, overrides: Partial<RunView> = {}): RunView {
  return {
    runId: "run_01",
    workflowName: manifest.workflow,
    source: { kind: "file", path: `/w/${manifest.workflow}.workflow.ts`, sha256: "0".repeat(64) },
    title: manifest.title ?? null,
    status: "running",
    outcome: null,
    origin: { kind: "cli" },
    parentRunId: null,
    rootRunId: "run_01",
    originCommand: "start",
    restartNumber: 0,
    paused: false,
    recoveryReason: null,
    error: null,
    revision: 1,
    createdAt: 1_000,
    startedAt: 1_000,
    finishedAt: null,
    currentWork: { kind: "none" },
    cursor: null,
    nodes: manifest.nodes.map((node) => pendingNode(node.path, node.kind)),
    manifest,
    ...overrides,
  };
}

/** Sets one node's saved state. */
export function withNode(view: RunView, path: string, patch: Partial<NodeView>): RunView {
  return {
    ...view,
    nodes: view.nodes.map((node) => (node.path === path ? { ...node, ...patch } : node)),
  };
}

/** A straight chain `n0 -> n1 -> … -> exit`. */
export function chainManifest(count: number): GraphManifest {
  const kinds: NodeView["kind"][] = [
    "agent",
    "compute",
    "shell",
    "action",
    "notify",
    "checkpoint",
    "decision",
  ];
  const nodes = Array.from({ length: count }, (_, i) =>
    manifestNode(`n${i}`, kinds[i % kinds.length] ?? "compute"),
  );
  return {
    version: 1,
    workflow: "chain",
    startPath: "n0",
    exits: ["done"],
    maxSteps: 1000,
    nodes,
    mounts: [],
    edges: nodes.map((node, i) => ({
      from: node.path,
      to:
        i + 1 < count
          ? { kind: "node" as const, path: `n${i + 1}` }
          : { kind: "exit" as const, exit: "done" },
    })),
  };
}
