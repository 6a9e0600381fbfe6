import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fakeAgentHome, type FakeModel, PI_TEST_ENV, removeTree, startFakeModel } from "@piw/test-kit";
import { createModelCheck } from "../src/index.js";

// The preflight's model check where Pi's SDK cannot be loaded: what Pi's files plainly show passes
// without it; anything else is left to the SDK, which here means skipped (the worker checks again).
// Each test file runs in its own process, so nothing here has loaded Pi's SDK before.
let model: FakeModel;
let home: string;
const noSdk = { PIW_PI_SDK: "/nonexistent/pi-coding-agent", ...PI_TEST_ENV };

beforeAll(async () => {
  model = await startFakeModel();
  home = mkdtempSync(join(tmpdir(), "piw-model-check-"));
});

afterAll(async () => {
  await model?.close();
  removeTree(home);
});

function agentEnv(name: string, files: Record<string, unknown>): NodeJS.ProcessEnv {
  const agentDir = join(home, name, "agent");
  mkdirSync(agentDir, { recursive: true });
  for (const [file, value] of Object.entries(files))
    writeFileSync(join(agentDir, file), JSON.stringify(value));
  return { ...noSdk, HOME: join(home, name), PI_CODING_AGENT_DIR: agentDir };
}

describe("the preflight's model check without Pi's SDK", () => {
  it("passes the default model and a pinned models.json model with a key, from Pi's files alone", async () => {
    const configured = { ...noSdk, ...fakeAgentHome(join(home, "configured"), { model }).env };
    const check = createModelCheck(configured);
    const steps = [{ path: "a" }, { path: "b", model: "fake/fake-model" }];
    expect(await check({ steps, cwd: home })).toEqual({ kind: "ok" });
  });

  it("passes the default model when auth.json holds a login", async () => {
    const env = agentEnv("login", {
      "auth.json": { anthropic: { type: "oauth", access: "a", refresh: "r", expires: 1 } },
    });
    expect(await createModelCheck(env)({ steps: [{ path: "a" }], cwd: home })).toEqual({ kind: "ok" });
  });

  it("leaves to the SDK what the files do not show: nothing configured, a model from Pi's catalog", async () => {
    const bare = agentEnv("bare", {});
    expect(await createModelCheck(bare)({ steps: [{ path: "a" }], cwd: home })).toEqual({ kind: "skipped" });
    const configured = { ...noSdk, ...fakeAgentHome(join(home, "pinned"), { model }).env };
    const pinned = [{ path: "a", model: "anthropic/claude-sonnet-4-5" }];
    expect(await createModelCheck(configured)({ steps: pinned, cwd: home })).toEqual({ kind: "skipped" });
    const keyless = agentEnv("keyless", {
      "models.json": { providers: { local: { models: [{ id: "m" }] } } },
    });
    const local = [{ path: "a", model: "local/m" }];
    expect(await createModelCheck(keyless)({ steps: local, cwd: home })).toEqual({ kind: "skipped" });
  });
});
