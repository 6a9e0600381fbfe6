import { describe, expect, it } from "vitest";
import { captureRunEnv, clientMethods, RUN_ENV_MAX_BYTES, runEnvSchema } from "../src/index.js";

describe("a run's environment", () => {
  it("is the client's environment without unset variables", () => {
    expect(captureRunEnv({ PATH: "/bin", TOKEN: "t", UNSET: undefined })).toEqual({
      ok: true,
      env: { PATH: "/bin", TOKEN: "t" },
    });
  });

  it("over the limit is a typed refusal that names the largest variables and never a value", () => {
    const secret = `secret-${"x".repeat(RUN_ENV_MAX_BYTES)}`;
    const refused = captureRunEnv({ PATH: "/bin", BIG_TOKEN: secret });
    if (refused.ok) throw new Error("expected a refusal");
    expect(refused.error.code).toBe("env_too_large");
    expect(refused.error.message).toContain("BIG_TOKEN");
    expect(refused.error.message).toContain(`at most ${RUN_ENV_MAX_BYTES / 1024} KiB`);
    expect(refused.error.message).not.toContain("secret-");
  });

  it("is bounded at the host's boundary too, and is optional in runs.reserve", () => {
    expect(runEnvSchema.safeParse({ A: "x".repeat(RUN_ENV_MAX_BYTES) }).success).toBe(false);
    expect(runEnvSchema.safeParse({ "A=B": "x" }).success).toBe(false);
    expect(runEnvSchema.safeParse({ A: "x", B: "" }).success).toBe(true);
    const reserve = clientMethods["runs.reserve"].params;
    const base = {
      workflowName: "w",
      source: { kind: "builtin", id: "w", revision: "1" },
      definitionDigest: "d",
      manifest: {
        version: 1,
        workflow: "w",
        startPath: "a",
        exits: [],
        maxSteps: 1,
        nodes: [],
        mounts: [],
        edges: [],
      },
      input: null,
      origin: { kind: "cli" },
      requestKey: "0123456789abcdef0123456789abcdef",
    };
    expect(reserve.safeParse({ ...base, env: { PATH: "/bin" } }).success).toBe(true);
    const issues = reserve.safeParse({ ...base, env: { BIG: "x".repeat(RUN_ENV_MAX_BYTES) } });
    expect(issues.success).toBe(false);
    expect(JSON.stringify(issues.error?.issues)).not.toContain("xxxxxxxx");
  });
});
