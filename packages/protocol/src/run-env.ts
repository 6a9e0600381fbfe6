import { z } from "zod";
import { RUN_ENV_MAX_BYTES, runEnvBytes } from "./run-env-capture.js";

// A name a process can receive: no `=` and no NUL; values have no NUL.
const envNameSchema = z.string().regex(/^[^=\0]+$/, "an environment variable name");
const envValueSchema = z.string().regex(/^[^\0]*$/, "an environment variable value");

export const runEnvSchema = z
  .record(envNameSchema, envValueSchema)
  .refine((env) => runEnvBytes(env) <= RUN_ENV_MAX_BYTES, `at most ${RUN_ENV_MAX_BYTES} bytes`);
