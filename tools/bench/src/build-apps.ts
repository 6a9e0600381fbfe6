import { spawnSync } from "node:child_process";

/** Build the host and worker apps with nx (cached when nothing changed), so a bench runs shipped code. */
export function buildHostAndWorker(repo: string): void {
  const result = spawnSync(
    "pnpm",
    [
      "exec",
      "nx",
      "run-many",
      "-t",
      "build",
      "--projects=@piw/app-host,@piw/app-worker",
      "--output-style=static",
    ],
    { cwd: repo, stdio: ["ignore", "ignore", "inherit"] },
  );
  if (result.status !== 0) throw new Error("the build failed; run `pnpm build` to see why");
}
