import type { LoadedWorkflow } from "../loader/load-workflow-file.js";

/** An agent step that would run in an isolated Pi session, with the model it pins, if any. */
export interface IsolatedStepModel {
  path: string;
  model?: string;
}

/** What the model check of a launch is asked. */
export interface ModelCheckRequest {
  steps: readonly IsolatedStepModel[];
  /** The run's directory: Pi reads project settings from there. */
  cwd: string;
  /** The entry file of Pi's SDK as the Pi that asks reported it, if any. */
  piSdkEntry?: string | undefined;
}

/**
 * The answer of a model check. `skipped`: it could not look (no Pi SDK in this process, or no time
 * left within the asker's limit); the worker checks again when the step opens its session.
 */
export type ModelCheckResult =
  | { kind: "ok" }
  | { kind: "unavailable"; message: string; problems: string[] }
  | { kind: "skipped" };

/**
 * Whether each isolated step has a model it can use. The preflight child's app supplies it (it may
 * load Pi's SDK; the engine never imports Pi). Contract: must not throw; a bug answers `skipped`.
 */
export type ModelCheck = (request: ModelCheckRequest) => Promise<ModelCheckResult>;

/**
 * The agent steps of a launch that would run in isolated Pi sessions: those that ask for one, and
 * for a run with no Pi session (the CLI) every agent step (conversation-pinned ones are refused
 * before this). A Pi-started run's conversation steps use the Pi session's own model.
 */
export function isolatedStepModels(loaded: LoadedWorkflow, piSession: boolean): IsolatedStepModel[] {
  const steps: IsolatedStepModel[] = [];
  for (const node of loaded.workflow.nodes.values()) {
    if (node.kind !== "agent") continue;
    const isolated = node.session === "isolated" || (node.session === "default" && !piSession);
    if (!isolated) continue;
    steps.push(
      node.isolated.model === undefined
        ? { path: node.path }
        : { path: node.path, model: node.isolated.model },
    );
  }
  return steps;
}
