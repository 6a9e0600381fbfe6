/**
 * The isolated agent step benchmark (`pnpm bench:isolated`): one isolated agent step (engine +
 * `@piw/pi-agent`: a fresh Pi SDK session, the step contract, the submit tool, the session record)
 * against a bare `createAgentSession` + one `prompt()` with the same in-memory session manager, tools
 * and scripted model, side by side. Both make exactly one model request. Figures and their reading live
 * in docs/performance.md ("Isolated agent steps").
 *
 * Environment: BENCH_ROUNDS (timed rounds of each, default 20), BENCH_WARMUP (untimed first, default 3).
 * Run from the repository root (tsx resolves `@piw/*` to source).
 */
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { agent, compileWorkflow, defineWorkflow, executeRun, MemoryRunPort } from "@piw/engine";
import { createPiAgentSessions, loadPiSdk } from "@piw/pi-agent";
import { z } from "zod";
import { fakeAgentHome, lastMessageText, PI_TEST_ENV, startFakeModel, text, toolCall } from "@piw/test-kit";

function envInt(name: string, fallback: number): number {
  const raw = process.env[name];
  const value = raw === undefined || raw === "" ? fallback : Number(raw);
  if (!Number.isInteger(value) || value < 0) throw new Error(`${name} must be a whole number.`);
  return value;
}
const ROUNDS = Math.max(1, envInt("BENCH_ROUNDS", 20));
const WARMUP = envInt("BENCH_WARMUP", 3);

const model = await startFakeModel();
model.reply((r) => (lastMessageText(r).includes("BARE-PROMPT") ? text("done") : undefined));
model.reply((r) =>
  lastMessageText(r).includes("ISO-STEP")
    ? toolCall("workflow", { action: "submit", output: "done" })
    : undefined,
);
const home = mkdtempSync(join(tmpdir(), "piw-bench-isolated-"));
const project = join(home, "project");
mkdirSync(project);
const { agentDir, env: agentEnv } = fakeAgentHome(home, { model });
Object.assign(process.env, PI_TEST_ENV);
const env = { ...process.env, ...agentEnv };

const loadStart = performance.now();
const sdk = await loadPiSdk(env);
const sdkLoadMs = performance.now() - loadStart;
const TOOLS = ["read", "grep", "find", "ls"];

async function bare(): Promise<void> {
  const loader = new sdk.DefaultResourceLoader({ cwd: project, agentDir, noExtensions: true });
  await loader.reload();
  const { session } = await sdk.createAgentSession({
    cwd: project,
    agentDir,
    sessionManager: sdk.SessionManager.inMemory(project),
    settingsManager: sdk.SettingsManager.create(project, agentDir),
    resourceLoader: loader,
    tools: TOOLS,
  });
  await session.prompt("BARE-PROMPT: say done.");
  session.dispose();
}

const workflow = compileWorkflow(
  defineWorkflow({
    name: "bench",
    startAt: "step",
    nodes: { step: agent({ session: "isolated", prompt: "ISO-STEP: submit done.", output: z.string() }) },
    edges: { step: { to: "done" } },
  }),
);
const sessions = createPiAgentSessions({ env });
let peakRss = 0;

async function isolated(): Promise<void> {
  const port = new MemoryRunPort({ runId: `bench-${Math.random().toString(36).slice(2)}` });
  port.status = "running";
  const sampler = setInterval(() => {
    peakRss = Math.max(peakRss, process.memoryUsage().rss);
  }, 5);
  try {
    const outcome = await executeRun({
      workflow,
      port,
      agents: { origin: { kind: "cli" }, workingDir: project, isolated: sessions },
    });
    if (outcome.kind !== "completed") throw new Error(`the isolated step ended ${outcome.kind}`);
  } finally {
    clearInterval(sampler);
    peakRss = Math.max(peakRss, process.memoryUsage().rss);
  }
}

async function timed(fn: () => Promise<void>): Promise<number[]> {
  const times: number[] = [];
  for (let i = 0; i < ROUNDS; i += 1) {
    const start = performance.now();
    await fn();
    times.push(performance.now() - start);
  }
  return times;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;
const p90 = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length * 0.9)] as number;

for (let i = 0; i < WARMUP; i += 1) {
  await bare();
  await isolated();
}
// Interleaved halves, so drift on a loaded machine falls on both sides alike.
const bareTimes = [...(await timed(bare))];
const isoTimes = [...(await timed(isolated))];
bareTimes.push(...(await timed(bare)));
isoTimes.push(...(await timed(isolated)));

const b = median(bareTimes);
const s = median(isoTimes);
const rows = [
  ["bare createAgentSession + prompt", b, p90(bareTimes)],
  ["isolated agent step (piw)", s, p90(isoTimes)],
] as const;
console.log(
  `isolated agent step vs bare SDK session, ${ROUNDS * 2} rounds each after ${WARMUP} warm-up, one model request each`,
);
console.log("| what | median ms | p90 ms |");
console.log("| --- | ---: | ---: |");
for (const [what, med, high] of rows) console.log(`| ${what} | ${med.toFixed(1)} | ${high.toFixed(1)} |`);
console.log(
  `ratio ${(s / b).toFixed(2)}x, added ${(s - b).toFixed(1)} ms per step (goal <= 1.3x and <= 150 ms)`,
);
console.log(`loading Pi's SDK (once per worker, on its first isolated step): ${sdkLoadMs.toFixed(0)} ms`);
console.log(
  `peak RSS during isolated steps: ${(peakRss / 2 ** 20).toFixed(0)} MiB (this process: engine + pi-agent + Pi SDK, as in a worker)`,
);
model.assertNoErrors();
await model.close();
rmSync(home, { recursive: true, force: true });
