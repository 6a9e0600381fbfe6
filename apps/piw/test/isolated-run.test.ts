import { mkdtempSync, readdirSync, readFileSync, readlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { connectHost } from "@piw/client";
import type { RunHistory, RunView } from "@piw/protocol";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  fakeAgentHome,
  type FakeModel,
  hostPidIn,
  lastMessageText,
  lastToolResultText,
  type ModelRequest,
  removeTree,
  startFakeModel,
  text,
  toolCall,
  waitFor,
} from "@piw/test-kit";
import { cleanUp, example, makeHome, piw, runIdIn } from "./cli-harness.js";

// `piw run` of a workflow with an isolated agent step, from a shell: the real CLI, host and worker,
// and a real Pi SDK session in the worker, talking to a scripted model on 127.0.0.1.
const SLOW = 180_000;
/** The store's AGENT_ATTEMPTS_MAX: isolated attempts of a visit that may lose their worker. */
const AGENT_ATTEMPTS_MAX = 3;

let model: FakeModel;
let home: string;
let user: string;
let project: string;
let env: NodeJS.ProcessEnv;

beforeAll(async () => {
  model = await startFakeModel();
  home = makeHome();
  user = mkdtempSync(join(tmpdir(), "piw-user-"));
  const agent = fakeAgentHome(user, { model });
  project = mkdtempSync(join(tmpdir(), "piw-review-"));
  writeFileSync(join(project, "README.md"), "# Widget\nThe widget spins. TODO: say how fast.\n");
  env = agent.env;
});

afterAll(async () => {
  await cleanUp(home);
  await model?.close();
  removeTree(user);
  removeTree(project);
});

async function history(runId: string): Promise<RunHistory> {
  const host = await connectHost({ stateDir: home, client: "test" });
  try {
    const found = await host.call("runs.history", { runId });
    if (!found) throw new Error(`no history for ${runId}`);
    return found;
  } finally {
    host.close();
  }
}

/** The host's children whose working directory is the project: the worker that runs our run. */
function workersIn(dir: string): number[] {
  const host = hostPidIn(home);
  const found: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      if (ppid === host && readlinkSync(`/proc/${entry}/cwd`) === dir) found.push(Number(entry));
    } catch {
      // The process ended while we looked.
    }
  }
  return found;
}

describe("piw run with an isolated agent step, from a shell", () => {
  it(
    "runs examples/review.workflow.ts to completion: the step reads a file in a read-only Pi session and submits",
    async () => {
      model.replyOnce((r) =>
        lastMessageText(r).includes("Review the README")
          ? toolCall("read", { path: "README.md" })
          : undefined,
      );
      model.replyOnce((r) =>
        lastToolResultText(r)?.includes("The widget spins")
          ? toolCall("workflow", {
              action: "submit",
              output: { verdict: "request_changes", findings: [{ file: "README.md", note: "say how fast" }] },
            })
          : undefined,
      );
      const result = await piw(home, ["run", example("review"), "the README"], { cwd: project, env });
      expect(result.stderr).toBe("");
      expect(result.code).toBe(0);
      expect(result.stdout).toContain("completed");
      const runId = runIdIn(result.stdout);

      const first = model.requests.find((r) => lastMessageText(r).includes("Review the README"));
      // Read-only by default, plus the step's submit tool; the author's system prompt was added.
      expect(first?.tools.map((t) => t.function.name).sort()).toEqual([
        "find",
        "grep",
        "ls",
        "read",
        "workflow",
      ]);
      expect(JSON.stringify(first?.messages[0])).toContain("You are a careful reviewer");
      // The prompt carries the shell step's output: the project's files.
      expect(lastMessageText(first as NonNullable<typeof first>)).toContain("README.md");

      const status = await piw(home, ["status", runId, "--json"], { env });
      const view = JSON.parse(status.stdout) as RunView;
      expect(view.outcome).toBe("completed");
      const saved = await history(runId);
      const review = saved.steps.find((s) => s.path === "review");
      expect(review?.output).toEqual({
        verdict: "request_changes",
        findings: [{ file: "README.md", note: "say how fast" }],
      });
      const session = saved.effects.filter((e) => e.effectType === "agent.session");
      expect(session).toHaveLength(1);
      expect(session[0]).toMatchObject({
        path: "review",
        status: "settled",
        result: { model: "fake/fake-model", tokensIn: 20, tokensOut: 10 },
      });

      // `piw status` shows what the step cost, and `--step` its transcript.
      const plain = await piw(home, ["status", runId], { env });
      expect(plain.stdout).toMatch(
        /isolated agent sessions\n {2}review #1\.1 {2}fake\/fake-model {2}20 in \/ 10 out tokens, cost not reported/,
      );
      expect(plain.stdout).toContain("run total  20 in / 10 out tokens, cost not reported");
      const transcript = await piw(home, ["status", runId, "--step", "review"], { env });
      expect(transcript.code).toBe(0);
      expect(transcript.stdout).toContain("review visit 1, attempt 1");
      expect(transcript.stdout).toContain("user: Review the README.");
      expect(transcript.stdout).toContain('→ read {"path":"README.md"}');
      expect(transcript.stdout).toContain("← read: # Widget");
      expect(transcript.stdout).toContain('→ workflow {"action":"submit"');
      const unknown = await piw(home, ["status", runId, "--step", "nope"], { env });
      expect(unknown.code).toBe(1);
      expect(unknown.stderr).toContain(`run ${runId} has no step nope`);
      model.assertNoErrors();
    },
    SLOW,
  );

  it(
    "retries the step as a new attempt in a fresh session after its worker is killed mid-step",
    async () => {
      const slowReply = text("thinking ".repeat(200), { chunkSize: 9, delayMs: 100 });
      model.replyOnce((r) =>
        lastMessageText(r).includes("Review the changelog") && lastMessageText(r).includes("attempt 1,")
          ? slowReply
          : undefined,
      );
      model.replyOnce((r) =>
        lastMessageText(r).includes("Review the changelog") && lastMessageText(r).includes("attempt 2,")
          ? toolCall("workflow", { action: "submit", output: { verdict: "approve", findings: [] } })
          : undefined,
      );
      const started = await piw(home, ["run", example("review"), "the changelog", "--detach"], {
        cwd: project,
        env,
      });
      expect(started.code, started.stderr).toBe(0);
      // Not a terminal: --detach prints just the run ID.
      const runId = started.stdout.trim();
      expect(runId).toMatch(/^review-[a-z0-9]+-[a-f0-9]+$/);
      // The model is streaming its first answer: the worker is mid-step.
      await model.waitForRequest(
        (r) =>
          lastMessageText(r).includes("Review the changelog") && lastMessageText(r).includes("attempt 1,"),
        60_000,
      );
      const [worker, ...others] = workersIn(project);
      expect(others).toEqual([]);
      process.kill(worker as number, "SIGKILL");

      await waitFor(
        "the run to complete",
        () =>
          model.requests.some(
            (r) =>
              r.outcome === "replied" &&
              lastMessageText(r).includes("Review the changelog") &&
              lastMessageText(r).includes("attempt 2,"),
          ),
        90_000,
      );
      let view: RunView | undefined;
      for (let i = 0; i < 100; i++) {
        view = JSON.parse((await piw(home, ["status", runId, "--json"], { env })).stdout) as RunView;
        if (view.outcome !== null) break;
        await new Promise((r) => setTimeout(r, 300));
      }
      expect(view?.outcome).toBe("completed");
      const saved = await history(runId);
      const review = saved.steps.filter((s) => s.path === "review").at(-1);
      expect(review).toMatchObject({
        attempt: 2,
        status: "succeeded",
        output: { verdict: "approve", findings: [] },
      });
      // Each attempt had its own session record: the killed one stays reserved, the retry settled.
      const sessions = saved.effects
        .filter((e) => e.effectType === "agent.session")
        .map((e) => [e.ordinal, e.status]);
      expect(sessions).toEqual([
        [0, "reserved"],
        [1, "settled"],
      ]);
      // The killed session's model call was cut off: the model saw its client hang up.
      const cut = model.requests.find(
        (r) => lastMessageText(r).includes("attempt 1,") && lastMessageText(r).includes("changelog"),
      );
      expect(cut?.outcome).toBe("client_closed");
      model.assertNoErrors();
    },
    SLOW,
  );

  it(
    "settles the session record with the tokens so far and ended: timed_out when the step's deadline passes",
    async () => {
      const file = join(project, "slow-review.workflow.ts");
      writeFileSync(
        file,
        `import { agent, defineWorkflow } from "piw";
import { z } from "zod";

export default defineWorkflow({
  name: "slow-review",
  input: z.object({ task: z.string() }),
  startAt: "review",
  nodes: {
    review: agent({
      session: "isolated",
      timeoutMs: 15_000,
      prompt: "SLOW-REVIEW: read README.md, then submit { ok: boolean }.",
      output: z.object({ ok: z.boolean() }),
    }),
  },
  edges: { review: { to: "done" } },
});
`,
      );
      model.replyOnce((r) =>
        lastMessageText(r).includes("SLOW-REVIEW") ? toolCall("read", { path: "README.md" }) : undefined,
      );
      // After the read, the model talks on and never submits: the deadline stops it.
      model.replyOnce((r) =>
        lastToolResultText(r)?.includes("The widget spins")
          ? text("pondering ".repeat(2_000), { chunkSize: 5, delayMs: 50 })
          : undefined,
      );
      const result = await piw(home, ["run", file, "x"], { cwd: project, env });
      expect(result.code, result.stderr).not.toBe(0);
      const runId = runIdIn(result.stdout + result.stderr);
      const saved = await history(runId);
      expect(saved.steps.find((s) => s.path === "review")?.status).toBe("timed_out");
      const sessions = saved.effects.filter((e) => e.effectType === "agent.session");
      expect(sessions).toHaveLength(1);
      // The cost so far is kept: the first reply's tokens, the model, how long the session ran.
      expect(sessions[0]).toMatchObject({
        status: "settled",
        result: { model: "fake/fake-model", tokensIn: 10, tokensOut: 5, ended: "timed_out" },
      });
      const report = sessions[0]?.result as { durationMs: number; transcript: { role: string }[] };
      expect(report.durationMs).toBeGreaterThan(0);
      expect(report.transcript.map((e) => e.role)).toContain("tool_call");
      model.assertNoErrors();
    },
    SLOW,
  );

  it(
    "parks the run with agent_attempts_exhausted after AGENT_ATTEMPTS_MAX attempts lost their worker, instead of relaunching it again",
    async () => {
      const attempt = (n: number) => (r: ModelRequest) =>
        lastMessageText(r).includes("Review the license") && lastMessageText(r).includes(`attempt ${n},`);
      for (let n = 1; n <= AGENT_ATTEMPTS_MAX; n++) {
        const slow = text("thinking ".repeat(200), { chunkSize: 9, delayMs: 100 });
        model.replyOnce((r) => (attempt(n)(r) ? slow : undefined));
      }
      const started = await piw(home, ["run", example("review"), "the license", "--detach"], {
        cwd: project,
        env,
      });
      expect(started.code, started.stderr).toBe(0);
      // Without a terminal, a detached run prints just its ID.
      const runId = started.stdout.trim();
      for (let n = 1; n <= AGENT_ATTEMPTS_MAX; n++) {
        // Each attempt's model call is streaming: its worker is mid-step. Kill it.
        await model.waitForRequest(attempt(n), 90_000);
        const [worker, ...others] = workersIn(project);
        expect(others).toEqual([]);
        process.kill(worker as number, "SIGKILL");
      }
      let view: RunView | undefined;
      for (let i = 0; i < 200; i++) {
        view = JSON.parse((await piw(home, ["status", runId, "--json"], { env })).stdout) as RunView;
        if (view.status === "parked") break;
        await new Promise((r) => setTimeout(r, 300));
      }
      expect(view?.status).toBe("parked");
      expect(view?.recoveryReason).toMatchObject({
        code: "agent_attempts_exhausted",
        path: "review",
        message: `Agent step review lost its worker in ${AGENT_ATTEMPTS_MAX} isolated attempts; resume the run after fixing the cause to try again.`,
      });
      // No further attempt was launched: the model saw exactly AGENT_ATTEMPTS_MAX calls for the step.
      expect(workersIn(project)).toEqual([]);
      expect(model.requests.filter((r) => lastMessageText(r).includes("Review the license"))).toHaveLength(
        AGENT_ATTEMPTS_MAX,
      );
      const sessions = (await history(runId)).effects.filter((e) => e.effectType === "agent.session");
      expect(sessions.map((e) => e.status)).toEqual(Array(AGENT_ATTEMPTS_MAX).fill("reserved"));
      model.assertNoErrors();
    },
    SLOW * 2,
  );

  it(
    "prints the step's tool calls live, before the step completes, and its submitted output",
    async () => {
      model.replyOnce((r) =>
        lastMessageText(r).includes("Review the widget")
          ? toolCall("read", { path: "README.md" })
          : undefined,
      );
      model.replyOnce((r) =>
        lastToolResultText(r)?.includes("The widget spins") &&
        JSON.stringify(r.messages).includes("Review the widget")
          ? // The model takes a moment before it submits, as a real one does: the read is the step's
            // current activity long enough for a view to carry it on a loaded machine.
            {
              ...toolCall("workflow", { action: "submit", output: { verdict: "approve", findings: [] } }),
              stream: { delayMs: 1_500 },
            }
          : undefined,
      );
      const result = await piw(home, ["run", example("review"), "the widget"], { cwd: project, env });
      expect(result.code, result.stderr).toBe(0);
      const lines = result.stdout.split("\n");
      const read = lines.findIndex((l) => l.includes("review: → read README.md"));
      const submitted = lines.findIndex((l) =>
        l.includes('review: submitted {"verdict":"approve","findings":[]}'),
      );
      const succeeded = lines.findIndex((l) => /^ {2}✓ review\b/.test(l));
      expect(read, result.stdout).toBeGreaterThanOrEqual(0);
      expect(submitted, result.stdout).toBeGreaterThan(read);
      expect(succeeded, result.stdout).toBeGreaterThan(read);
      // Not a terminal: no spinner, nothing redrawn.
      expect(result.stdout).not.toMatch(/[\r\u2800-\u28ff]/);
      model.assertNoErrors();
    },
    SLOW,
  );
});
