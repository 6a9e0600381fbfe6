import { createRequire } from "node:module";

/** The version of the package this `piw` came from: its package.json is one folder above dist/. */
export function packageVersion(): string {
  try {
    const manifest: unknown = createRequire(import.meta.url)("../package.json");
    const version = (manifest as { version?: unknown } | null)?.version;
    return typeof version === "string" ? version : "unknown";
  } catch {
    return "unknown";
  }
}
