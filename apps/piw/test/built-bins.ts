import { spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";

/** The apps folder: the built bins below are named from it. */
export const APPS = join(import.meta.dirname, "..", "..");
/** The repository root (its examples folder). */
export const REPO = join(APPS, "..");
/** The two ways a user starts the CLI: the `piw` app and the Pi package's `piw` bin. */
export const BINS = ["piw/dist/main.js", "pi-package/dist/piw.js"];

/**
 * A runner of a built bin, as a user runs it: `piw(bin, args, preload?)` with `env`, in `cwd`. The
 * preload (a module URL, for `--import`) sees every module the process resolves.
 */
export function builtPiw(env: NodeJS.ProcessEnv, cwd: string) {
  return (bin: string, args: string[], preload?: string) => {
    const file = join(APPS, bin);
    if (!existsSync(file)) throw new Error(`${file} is missing: run pnpm build first`);
    return spawnSync(process.execPath, [...(preload ? ["--import", preload] : []), file, ...args], {
      encoding: "utf8",
      env,
      cwd,
      timeout: 60_000,
    });
  };
}

/** A preload that appends every module URL the process resolves to `log`, one a line. */
export function recordLoads(log: string): string {
  const hook = `import { appendFileSync } from "node:fs"; import { registerHooks } from "node:module";
registerHooks({ resolve(specifier, context, next) { const r = next(specifier, context); appendFileSync(${JSON.stringify(log)}, r.url + "\\n"); return r; } });`;
  return `data:text/javascript,${encodeURIComponent(hook)}`;
}

/** A module URL of zod, wherever pnpm or npm put it. */
export const ZOD = /\/node_modules\/(\.pnpm\/[^/]+\/node_modules\/)?zod\//;

/** Whether the process whose loads `log` recorded loaded zod. */
export const loadsZod = (log: string) =>
  readFileSync(log, "utf8")
    .split("\n")
    .some((url) => ZOD.test(url));
