import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { RunView } from "@piw/protocol";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  fakeAgentHome,
  type FakeModel,
  lastMessageText,
  PI_TEST_ENV,
  removeTree,
  startFakeModel,
} from "@piw/test-kit";
import { cleanUp, example, makeHome, piw, runIdIn } from "./cli-harness.js";

// `piw run` of workflows whose isolated agent steps have no usable model: refused before anything
// is saved when that can be known up front, failed with `model_unavailable` (not lost turns) when the
// provider refuses the model for good. The real CLI, preflight child, host, worker and Pi SDK.
const SLOW = 180_000;

/** A workflow of one isolated step, `STEP-<name>`, on `model` (Pi's default when undefined). */
function oneStep(name: string, model?: string): string {
  return `import { agent, defineWorkflow } from "piw";
import { z } from "zod";

export default defineWorkflow({
  name: "${name}",
  input: z.object({ task: z.string() }),
  startAt: "ask",
  nodes: {
    ask: agent({
      session: "isolated",${model === undefined ? "" : `\n      model: "${model}",`}
      prompt: "STEP-${name}: submit { ok: boolean }.",
      output: z.object({ ok: z.boolean() }),
    }),
  },
  edges: { ask: { to: "done" } },
});
`;
}

let model: FakeModel;
/** State folders: the host's workers read Pi's folder from the environment that started the host. */
let home: string;
let bareHome: string;
let user: string;
let project: string;
/** A Pi agent folder with the fake model configured (Pi's retries off: a 5xx is one lost turn). */
let configured: NodeJS.ProcessEnv;
/** A Pi agent folder with nothing in it: no model, no credentials. */
let bare: NodeJS.ProcessEnv;
let bareAgentDir: string;

beforeAll(async () => {
  model = await startFakeModel();
  home = makeHome();
  bareHome = makeHome();
  user = mkdtempSync(join(tmpdir(), "piw-user-"));
  // A check that would outlast the preflight's time limit is skipped: give Pi's SDK, loaded from
  // source on a busy test machine, all the time it needs.
  const slowPreflight = { PIW_PREFLIGHT_TIMEOUT_MS: "120000" };
  configured = {
    ...fakeAgentHome(join(user, "configured"), { model, settings: { retry: { enabled: false } } }).env,
    ...slowPreflight,
  };
  const bareUser = join(user, "bare");
  bareAgentDir = join(bareUser, "agent");
  mkdirSync(bareAgentDir, { recursive: true });
  bare = { HOME: bareUser, PI_CODING_AGENT_DIR: bareAgentDir, ...PI_TEST_ENV, ...slowPreflight };
  project = mkdtempSync(join(tmpdir(), "piw-models-"));
  writeFileSync(join(project, "gone.workflow.ts"), oneStep("gone", "fake/no-such-model"));
  writeFileSync(join(project, "denied.workflow.ts"), oneStep("denied"));
  writeFileSync(join(project, "retired.workflow.ts"), oneStep("retired"));
  writeFileSync(join(project, "flaky.workflow.ts"), oneStep("flaky"));
});

afterAll(async () => {
  await cleanUp(home);
  await cleanUp(bareHome);
  await model?.close();
  removeTree(user);
  removeTree(project);
});

async function runs(state: string, env: NodeJS.ProcessEnv): Promise<unknown[]> {
  const listed = await piw(state, ["list", "--json"], { env });
  expect(listed.code, listed.stderr).toBe(0);
  return (JSON.parse(listed.stdout) as { runs: unknown[] }).runs;
}

async function view(runId: string): Promise<RunView> {
  const status = await piw(home, ["status", runId, "--json"], { env: configured });
  return JSON.parse(status.stdout) as RunView;
}

describe("piw run refuses a workflow whose isolated agent steps have no model", () => {
  it(
    "with no model configured in Pi: exit 64, a bounded message naming the step and how to configure one, no run",
    async () => {
      const result = await piw(bareHome, ["run", example("parallel-review"), "check"], {
        cwd: project,
        env: bare,
      });
      expect(result.code, result.stdout + result.stderr).toBe(64);
      expect(result.stderr).toContain("no usable model for the workflow's isolated agent steps");
      expect(result.stderr).toContain(
        "checks/review/review: Pi has no model configured (no default model in settings.json, no provider with credentials)",
      );
      expect(result.stderr).toContain("run pi and /login");
      expect(result.stderr).toContain(join(bareAgentDir, "models.json"));
      expect(result.stderr.length).toBeLessThan(2_000);
      expect(result.stdout).toBe("");
      expect(await runs(bareHome, bare)).toEqual([]);
    },
    SLOW,
  );

  it(
    "with a pinned model Pi does not know: exit 64 naming the model, no run",
    async () => {
      const result = await piw(home, ["run", join(project, "gone.workflow.ts"), "x"], {
        cwd: project,
        env: configured,
      });
      expect(result.code, result.stdout + result.stderr).toBe(64);
      expect(result.stderr).toContain("ask: model fake/no-such-model is not one Pi knows");
      expect(await runs(home, configured)).toEqual([]);
      expect(model.requests).toEqual([]);
    },
    SLOW,
  );
});

describe("an isolated step whose provider refuses the model at run time", () => {
  it(
    "fails with model_unavailable after one request on a 401, without the provider's text",
    async () => {
      model.reply((r) =>
        lastMessageText(r).includes("STEP-denied")
          ? { type: "http_error", status: 401, message: "Incorrect API key provided: sk-secret-1234" }
          : undefined,
      );
      const result = await piw(home, ["run", join(project, "denied.workflow.ts"), "x"], {
        cwd: project,
        env: configured,
      });
      expect(result.code, result.stdout + result.stderr).toBe(1);
      const failed = await view(runIdIn(result.stdout + result.stderr));
      expect(failed).toMatchObject({ status: "failed", error: { code: "model_unavailable" } });
      expect(failed.error?.message).toContain(
        "the provider refused the credentials for model fake/fake-model",
      );
      expect(JSON.stringify(failed)).not.toContain("sk-secret");
      expect(result.stdout + result.stderr).not.toContain("sk-secret");
      expect(model.requests.filter((r) => lastMessageText(r).includes("STEP-denied"))).toHaveLength(1);
    },
    SLOW,
  );

  it(
    "fails with model_unavailable after one request when the provider does not know the model (404)",
    async () => {
      model.reply((r) =>
        lastMessageText(r).includes("STEP-retired")
          ? { type: "http_error", status: 404, message: "The model `fake-model` does not exist" }
          : undefined,
      );
      const result = await piw(home, ["run", join(project, "retired.workflow.ts"), "x"], {
        cwd: project,
        env: configured,
      });
      expect(result.code, result.stdout + result.stderr).toBe(1);
      const failed = await view(runIdIn(result.stdout + result.stderr));
      expect(failed.error).toMatchObject({ code: "model_unavailable" });
      expect(failed.error?.message).toContain("the provider does not know model fake/fake-model");
      expect(model.requests.filter((r) => lastMessageText(r).includes("STEP-retired"))).toHaveLength(1);
    },
    SLOW,
  );

  it(
    "still counts a 503 as a lost turn: three in a row park the run with agent_turns_lost",
    async () => {
      model.reply((r) =>
        lastMessageText(r).includes("STEP-flaky")
          ? { type: "http_error", status: 503, message: "Service temporarily unavailable" }
          : undefined,
      );
      const result = await piw(home, ["run", join(project, "flaky.workflow.ts"), "x"], {
        cwd: project,
        env: configured,
      });
      expect(result.code, result.stdout + result.stderr).toBe(5);
      const parked = await view(runIdIn(result.stdout + result.stderr));
      expect(parked).toMatchObject({ status: "parked", recoveryReason: { code: "agent_turns_lost" } });
      expect(model.requests.filter((r) => lastMessageText(r).includes("STEP-flaky"))).toHaveLength(3);
    },
    SLOW,
  );
});
