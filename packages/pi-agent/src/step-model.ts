import { join } from "node:path";
import type { PiSdk } from "./load-pi-sdk.js";

type ModelRuntime = Awaited<ReturnType<PiSdk["ModelRuntime"]["create"]>>;
type PiModel = NonNullable<ReturnType<ModelRuntime["getModel"]>>;

/** How to give Pi a model, said after every "no usable model" problem. */
export function configureHint(agentDir: string): string {
  return (
    `configure one: run pi and /login, or add a provider to ${join(agentDir, "models.json")} ` +
    `and name it in ${join(agentDir, "settings.json")} (defaultProvider, defaultModel); \`pi --list-models\` lists what Pi can use`
  );
}

/**
 * The model an isolated step would use, found the way Pi's own session finds it: a pinned
 * `provider/id`, else settings.json's default, else any model whose provider has credentials.
 * `pinned` is set only for a pinned model; otherwise Pi's session picks the same one itself.
 */
export type StepModel =
  | { ok: true; modelRuntime: ModelRuntime; pinned?: PiModel }
  | { ok: false; problem: string };

export async function resolveStepModel(
  sdk: PiSdk,
  where: { agentDir: string; cwd: string },
  pinnedName: string | undefined,
): Promise<StepModel> {
  const { agentDir, cwd } = where;
  const modelRuntime = await sdk.ModelRuntime.create({
    authPath: join(agentDir, "auth.json"),
    modelsPath: join(agentDir, "models.json"),
  });
  if (pinnedName !== undefined) {
    const slash = pinnedName.indexOf("/");
    const provider = pinnedName.slice(0, slash);
    const pinned = modelRuntime.getModel(provider, pinnedName.slice(slash + 1));
    if (!pinned) return { ok: false, problem: `model ${pinnedName} is not one Pi knows` };
    if (!modelRuntime.hasConfiguredAuth(provider))
      return { ok: false, problem: `Pi has no credentials for provider ${provider} (model ${pinnedName})` };
    return { ok: true, modelRuntime, pinned };
  }
  const settings = sdk.SettingsManager.create(cwd, agentDir);
  const provider = settings.getDefaultProvider();
  const id = settings.getDefaultModel();
  const named = provider && id ? modelRuntime.getModel(provider, id) : undefined;
  if (named && modelRuntime.hasConfiguredAuth(named.provider)) return { ok: true, modelRuntime };
  // Pi falls back to any model whose provider has credentials.
  if (modelRuntime.getAvailableSnapshot().length > 0) return { ok: true, modelRuntime };
  if (!provider || !id)
    return {
      ok: false,
      problem: "Pi has no model configured (no default model in settings.json, no provider with credentials)",
    };
  return {
    ok: false,
    problem: named
      ? `Pi has no credentials for provider ${provider} (default model ${provider}/${id})`
      : `the default model ${provider}/${id} is not one Pi knows, and no provider has credentials`,
  };
}
