import { mkdirSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import type { FakeModel } from "./fake-model.ts";

// A Pi agent dir (what a user has in ~/.pi/agent) whose one model is the scripted fake model on
// 127.0.0.1: every test that runs Pi, a Pi SDK session or a worker's isolated step writes it here.

const FAKE_PROVIDER = "fake";

/** What Pi and its SDK read from the environment in every test: no network, no telemetry, no version check. */
export const PI_TEST_ENV = { PI_OFFLINE: "1", PI_TELEMETRY: "0", PI_SKIP_VERSION_CHECK: "1" } as const;

/** A model's price per million tokens, as Pi's `models.json` spells it. */
interface ModelCost {
  input: number;
  output: number;
  cacheRead: number;
  cacheWrite: number;
}

export interface AgentConfigOptions {
  model: FakeModel;
  /** Merged over the default agent `settings.json`. */
  settings?: Record<string, unknown>;
  /** The fake model's price (default 0: Pi then reports no cost). */
  cost?: ModelCost;
}

/** Write `models.json` (the fake model, as provider `fake`) and `settings.json` into `agentDir`. */
export function writeAgentConfig(agentDir: string, options: AgentConfigOptions): void {
  const { model } = options;
  const models = {
    providers: {
      [FAKE_PROVIDER]: {
        baseUrl: model.baseUrl,
        api: "openai-completions",
        apiKey: "fake-key",
        models: [
          {
            id: model.modelId,
            name: "Fake scripted model",
            reasoning: false,
            input: ["text"],
            contextWindow: 128_000,
            maxTokens: 4_096,
            cost: options.cost ?? { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
          },
        ],
      },
    },
  };
  const settings = {
    defaultProvider: FAKE_PROVIDER,
    defaultModel: model.modelId,
    defaultProjectTrust: "always",
    ...options.settings,
  };
  writeJson(join(agentDir, "models.json"), models);
  writeJson(join(agentDir, "settings.json"), settings);
}

/**
 * The environment of a process that uses the Pi agent dir `home/agent` (written for `model`) as its
 * user's: HOME, PI_CODING_AGENT_DIR and PI_TEST_ENV. Returns the agent dir with it.
 */
export function fakeAgentHome(
  home: string,
  options: AgentConfigOptions,
): { agentDir: string; env: Record<string, string> } {
  const agentDir = join(home, "agent");
  writeAgentConfig(agentDir, options);
  return { agentDir, env: { HOME: home, PI_CODING_AGENT_DIR: agentDir, ...PI_TEST_ENV } };
}

function writeJson(path: string, value: unknown): void {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, `${JSON.stringify(value, null, 2)}\n`);
}

/** The whole environment of a test's `pi` process: nothing of the user's but PATH and TMPDIR. */
export function piProcessEnv(home: string, agentDir: string): Record<string, string> {
  return {
    PATH: process.env.PATH ?? "/usr/local/bin:/usr/bin:/bin",
    HOME: home,
    TMPDIR: process.env.TMPDIR ?? tmpdir(),
    PI_CODING_AGENT_DIR: agentDir,
    ...PI_TEST_ENV,
  };
}
