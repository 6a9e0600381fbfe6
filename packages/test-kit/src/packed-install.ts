import { execFile } from "node:child_process";
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { PI_PACKAGE } from "./piw-fixture.ts";

const run = promisify(execFile);

/** The environment of a user's shell: none of pnpm's npm_* settings, no piw overrides. */
export function userEnv(home: string, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (key.toLowerCase().startsWith("npm_") || key.startsWith("PIW_") || key === "NODE_OPTIONS") continue;
    env[key] = value;
  }
  return { ...env, HOME: home, PIW_HOME: join(home, "piw"), ...extra };
}

/** npm's cache of the real user, so that repeated installs in temp homes fetch each package once. */
export function sharedNpmCache(fallbackHome: string): string {
  return join(process.env.HOME ?? fallbackHome, ".npm");
}

/** The built package must exist: these tests pack what `pnpm build` made and never build it. */
export function requireBuiltPackage(): void {
  if (!existsSync(join(PI_PACKAGE, "dist", "piw.js"))) {
    throw new Error(`${PI_PACKAGE}/dist is missing: run pnpm build before the e2e tests`);
  }
}

/** `npm pack` of the built package into `destination`; returns the tarball's path. */
export async function packPiw(destination: string, env: NodeJS.ProcessEnv): Promise<string> {
  await run("npm", ["pack", "--silent", "--pack-destination", destination], { cwd: PI_PACKAGE, env });
  const packed = readdirSync(destination).find((name) => name.endsWith(".tgz"));
  if (packed === undefined) throw new Error("npm pack wrote no tarball");
  return join(destination, packed);
}
