import { readFileSync } from "node:fs";
import { join } from "node:path";

// What Pi's own files show without loading Pi's SDK (a second or more of imports): enough to let the
// usual configured start through quickly. Only a yes is taken from here; anything unclear (a model
// from Pi's built-in catalog, a key in the environment, an unreadable file) goes to the SDK, and a
// refusal always comes from it.

function readObject(path: string): Record<string, unknown> {
  try {
    const parsed: unknown = JSON.parse(readFileSync(path, "utf8"));
    return typeof parsed === "object" && parsed !== null && !Array.isArray(parsed)
      ? (parsed as Record<string, unknown>)
      : {};
  } catch {
    return {};
  }
}

const nonEmpty = (value: unknown): boolean => typeof value === "string" && value !== "";

/** Providers with a credential in auth.json: an API key or a login. */
function loggedIn(agentDir: string): Set<string> {
  const providers = new Set<string>();
  for (const [provider, credential] of Object.entries(readObject(join(agentDir, "auth.json")))) {
    const c = credential as { type?: unknown; key?: unknown; access?: unknown } | null;
    if ((c?.type === "api_key" && nonEmpty(c.key)) || (c?.type === "oauth" && nonEmpty(c.access)))
      providers.add(provider);
  }
  return providers;
}

/** models.json's providers: which model ids each declares, and whether it carries its own key. */
function declared(agentDir: string): Map<string, { ids: Set<string>; keyed: boolean }> {
  const found = new Map<string, { ids: Set<string>; keyed: boolean }>();
  const providers = readObject(join(agentDir, "models.json")).providers;
  if (typeof providers !== "object" || providers === null) return found;
  for (const [name, value] of Object.entries(providers)) {
    const p = value as { apiKey?: unknown; models?: unknown } | null;
    const models = Array.isArray(p?.models) ? (p.models as { id?: unknown }[]) : [];
    const ids = new Set(models.map((m) => m?.id).filter((id): id is string => nonEmpty(id)));
    found.set(name, { ids, keyed: nonEmpty(p?.apiKey) });
  }
  return found;
}

/**
 * True when Pi's files plainly give a step a model: a pinned model that models.json declares with a
 * credential for its provider; for Pi's default, any credential at all (Pi then finds a model).
 */
export function evidentlyUsable(agentDir: string, pinned: string | undefined): boolean {
  const credentials = loggedIn(agentDir);
  const providers = declared(agentDir);
  if (pinned === undefined) {
    return credentials.size > 0 || [...providers.values()].some((p) => p.keyed && p.ids.size > 0);
  }
  const slash = pinned.indexOf("/");
  const provider = pinned.slice(0, slash);
  const entry = providers.get(provider);
  if (!entry?.ids.has(pinned.slice(slash + 1))) return false;
  return entry.keyed || credentials.has(provider);
}
