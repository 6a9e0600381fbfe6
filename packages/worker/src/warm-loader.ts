import { stripTypeScriptTypes } from "node:module";

/**
 * Start Node's TypeScript stripper (a WebAssembly module, tens of milliseconds cold) while the worker
 * is idle, so the run's first workflow load does not pay for it. Workflow files load through the same
 * stripper (see the engine's native-workflow-import.ts). Node flags this API as experimental; its one
 * warning is held back here because it would only be noise in the host's log.
 */
export function warmWorkflowLoader(): void {
  const emitWarning = process.emitWarning;
  process.emitWarning = () => {};
  try {
    stripTypeScriptTypes("const warm: number = 1;");
  } catch {
    // Only a head start: the real load reports any problem with the stripper itself.
  } finally {
    process.emitWarning = emitWarning;
  }
}
