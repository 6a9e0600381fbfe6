import type { NodeFailureInfo } from "../compiler/compiled-workflow.js";

// Crossing a mount's boundary. An included workflow entered again (a loop back to its mount) starts
// clean: its nodes see none of the outputs or routed failures of the previous entry, exactly as on the
// first one; visit numbers keep counting, so the new visits and their effects get identities of their
// own. Leaving it through an exit saves its result under the mount's own path, where the parent's
// nodes read it as `outputs.<mount>`.

const scopeOf = (path: string): string => {
  const cut = path.lastIndexOf("/");
  return cut < 0 ? "" : path.slice(0, cut);
};

/** Whether a step from `from` to `to` stays in one scope: it leaves and enters no mount. */
export const sameScope = (from: string, to: string): boolean => scopeOf(from) === scopeOf(to);

const encloses = (scope: string, inner: string): boolean => scope === inner || inner.startsWith(`${scope}/`);

/** The outermost mount scope that a step from node `from` to node `to` enters, or null for none. */
function enteredScope(from: string, to: string): string | null {
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

/**
 * The step from node `from` (whose output is `output`) to node `to`: each mount it leaves gets that
 * output as its result, and a mount it enters forgets what its nodes saved on an earlier entry.
 */
export function crossScopes(state: ScopedState, from: string, to: string, output: unknown): void {
  const toScope = scopeOf(to);
  for (let scope = scopeOf(from); scope !== "" && !encloses(scope, toScope); scope = scopeOf(scope)) {
    state.outputsByPath.set(scope, output);
  }
  const entered = enteredScope(from, to);
  if (entered === null) return;
  const prefix = `${entered}/`;
  for (const map of [state.outputsByPath, state.failuresByPath]) {
    for (const path of [...map.keys()]) if (path.startsWith(prefix)) map.delete(path);
  }
}
