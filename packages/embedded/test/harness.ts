import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { type LoadedWorkflow, loadWorkflowFile } from "@piw/engine";
import { RunStore } from "@piw/store";
import { EmbeddedRuntime } from "../src/index.js";

const EXAMPLES = resolve(import.meta.dirname, "../../../examples");

export interface Harness {
  store: RunStore;
  /** The store's state directory (state.db and its WAL). */
  stateDir: string;
  runtime: EmbeddedRuntime;
  cleanup(): void;
}

export function openRuntime(): Harness {
  const dir = mkdtempSync(join(tmpdir(), "piw-embedded-"));
  const stateDir = join(dir, "state");
  const store = RunStore.open({ stateDir });
  return {
    store,
    stateDir,
    runtime: new EmbeddedRuntime(store),
    cleanup() {
      store.close();
      rmSync(dir, { recursive: true, force: true, maxRetries: 20, retryDelay: 100 });
    },
  };
}

export function example(name: string): Promise<LoadedWorkflow> {
  return loadWorkflowFile(join(EXAMPLES, `${name}.workflow.ts`));
}

/** Wait until a hung node is reached, then abandon the execution like a killed worker. */
export async function abandonAfter(promise: Promise<unknown>, ms = 80): Promise<void> {
  await Promise.race([promise, new Promise((r) => setTimeout(r, ms))]);
}
