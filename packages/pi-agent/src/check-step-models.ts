import type { ModelCheck, ModelCheckResult } from "@piw/engine";
import { piAgentDir } from "@piw/state-dir";
import { evidentlyUsable } from "./evident-model.js";
import { loadPiSdk, type PiSdk } from "./load-pi-sdk.js";
import { configureHint, resolveStepModel } from "./step-model.js";

/**
 * The preflight's model check (`ModelCheck`), with the Pi settings, models and credentials of `env`
 * (Pi's agent folder as @piw/state-dir computes it). It loads Pi's SDK only when Pi's files do not
 * plainly show a model for every isolated step; without the SDK it skips, and the worker checks again.
 */
export function createModelCheck(env: NodeJS.ProcessEnv = process.env): ModelCheck {
  return async (request): Promise<ModelCheckResult> => {
    const agentDir = piAgentDir({ env });
    // One look per model: steps on the default model share it, each pinned model has its own.
    const byModel = new Map<string | undefined, string[]>();
    for (const step of request.steps)
      byModel.set(step.model, [...(byModel.get(step.model) ?? []), step.path]);
    // The usual configured start needs no SDK: Pi's files show a model.
    for (const model of [...byModel.keys()]) if (evidentlyUsable(agentDir, model)) byModel.delete(model);
    if (byModel.size === 0) return { kind: "ok" };
    let sdk: PiSdk;
    try {
      sdk = await loadPiSdk(env, { reportedEntry: request.piSdkEntry });
    } catch {
      return { kind: "skipped" };
    }
    const problems: string[] = [];
    try {
      for (const [model, paths] of byModel) {
        const found = await resolveStepModel(sdk, { agentDir, cwd: request.cwd }, model);
        if (!found.ok) problems.push(`${paths.join(", ")}: ${found.problem}`);
      }
    } catch {
      // Pi's own error may quote settings with secrets in them; the worker checks again anyway.
      return { kind: "skipped" };
    }
    if (problems.length === 0) return { kind: "ok" };
    return {
      kind: "unavailable",
      message: `no usable model for the workflow's isolated agent steps (Pi's folder ${agentDir}):`,
      problems: [...problems, configureHint(agentDir)],
    };
  };
}
