import type { NodeFailureInfo } from "../compiler/compiled-workflow.js";

// An included workflow entered again (a loop back to its mount) starts clean: its nodes see none of
// the outputs or routed failures of the previous visit of the mount, exactly as on the first entry.
// Visit numbers keep counting, so the new visits and their effects get identities of their own.

const scopeOf = (path: string): string => {
  const cut = path.lastIndexOf("/");
  return cut < 0 ? "" : path.slice(0, cut);
};

const encloses = (scope: string, inner: string): boolean =>
  scope === inner || inner.startsWith(`${scope}/`);

/** The outermost mount scope that a step from node `from` to node `to` enters, or null for none. */
export function enteredScope(from: string, to: string): string | null {
  const fromScope = scopeOf(from);
  let entered: string | null = null;
  for (let scope = scopeOf(to); scope !== "" && !encloses(scope, fromScope); scope = scopeOf(scope)) {
    entered = scope;
  }
  return entered;
}

interface ScopedState {
  outputsByPath: Map<string, unknown>;
  failuresByPath: Map<string, NodeFailureInfo>;
}

/** Drop what the nodes under `scope` saved before, as the step from `from` to `to` enters it anew. */
export function enterScope(state: ScopedState, from: string, to: string): void {
  const scope = enteredScope(from, to);
  if (scope === null) return;
  const prefix = `${scope}/`;
  for (const map of [state.outputsByPath, state.failuresByPath]) {
    for (const path of [...map.keys()]) if (path.startsWith(prefix)) map.delete(path);
  }
}
