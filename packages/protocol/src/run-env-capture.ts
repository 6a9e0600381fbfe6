// Capturing an environment needs no zod: `piw run`'s quick route takes it without the schema (run-env.ts).

/**
 * The environment of the shell or Pi process that started a run: saved with the run as private state
 * (like its input: never shown, never in an error or log line) and given to every command it runs.
 * At most this many bytes (names, values and one `=` and NUL each, as the kernel counts them), so a
 * `runs.reserve` frame stays well below MAX_FRAME_BYTES with its input beside it.
 */
export const RUN_ENV_MAX_BYTES = 128 * 1024;

/** A run's environment: variable names to values, as a process receives them. */
export type RunEnv = Record<string, string>;

const encoder = new TextEncoder();

/** The size of an environment as `execve` counts it: `NAME=value\0` per variable. */
export function runEnvBytes(env: Readonly<RunEnv>): number {
  let bytes = 0;
  for (const [name, value] of Object.entries(env)) {
    bytes += encoder.encode(name).byteLength + encoder.encode(value).byteLength + 2;
  }
  return bytes;
}

/** Why an environment cannot be saved with a run: sizes and variable names, never values. */
export interface RunEnvTooLarge {
  code: "env_too_large";
  message: string;
}

/**
 * The environment a client saves with a run it starts: its own, without unset variables, or the
 * refusal (naming the largest variables) when it is over RUN_ENV_MAX_BYTES.
 */
export function captureRunEnv(
  source: Readonly<Record<string, string | undefined>>,
): { ok: true; env: RunEnv } | { ok: false; error: RunEnvTooLarge } {
  const env: RunEnv = {};
  for (const [name, value] of Object.entries(source)) {
    if (value !== undefined && !name.includes("=") && !name.includes("\0") && !value.includes("\0")) {
      env[name] = value;
    }
  }
  const bytes = runEnvBytes(env);
  if (bytes <= RUN_ENV_MAX_BYTES) return { ok: true, env };
  const largest = Object.entries(env)
    .sort(([, a], [, b]) => b.length - a.length)
    .slice(0, 3)
    .map(([name]) => (name.length > 64 ? `${name.slice(0, 63)}…` : name));
  return {
    ok: false,
    error: {
      code: "env_too_large",
      message:
        `The environment is ${Math.ceil(bytes / 1024)} KiB; a run saves at most ${RUN_ENV_MAX_BYTES / 1024} KiB of it. ` +
        `Unset large variables (the largest: ${largest.join(", ")}) and start the run again. Nothing was started.`,
    },
  };
}
