import { AGENT_SESSION_EFFECT, type JsonValue, reminderKind, visitMessageId } from "@piw/protocol";
import type { CompiledAgentNode, NodeContext } from "../compiler/compiled-workflow.js";
import { effectId, nodeVisitId } from "../identity/execution-identity.js";
import {
  type AgentPlacement,
  agentSessionFor,
  type IsolatedAgentSession,
  READ_ONLY_TOOLS,
} from "./agent-session.js";
import { BudgetGuard } from "./budget-guard.js";
import { DeadlinePassed, expectSaved, NodeFailure, RunParked } from "./execution-signals.js";
import type { AgentEvent, RunPort } from "./run-port.js";
import { rejectedOutput, SUBMIT_CALL, stepPrompt } from "./step-contract.js";
import { isProgressInvalid } from "./visit-progress.js";

/** How many times the model may end its turn without a submission before the agent step fails. */
export const MAX_AGENT_NUDGES = 2;

/**
 * How many turns in a row may be lost (Pi crashed, the session ended) or fail at the provider before
 * the step parks its run with `agent_turns_lost`. These are not the model's doing: they never count
 * against MAX_AGENT_NUDGES, and the run stays resumable. A provider failure that no retry heals
 * (`model_unavailable`) is not one of them: it fails the step at once.
 */
export const MAX_LOST_AGENT_TURNS = 3;

/** The part of a node run an agent step needs. */
export interface AgentStepRun {
  port: RunPort;
  runId: string;
  visit: number;
  attempt: number;
  agents?: AgentPlacement;
}

/**
 * Where the step contract's texts go and its events come from: the run's Pi conversation (through
 * the host's outbox and turn reports) or an isolated session the worker owns. The contract itself
 * (prompt, validation, correction, reminders, lost turns) is the same for both.
 */
interface AgentChannel {
  /** `key` names the text within the attempt (`step`, `nudge:1`, `retry:2`); it makes the message ID. */
  deliver(key: string, body: string): Promise<void>;
  next(signal: AbortSignal): Promise<AgentEvent>;
  /** The run's budget allows another turn; at a limit the run parks (`RunParked` is thrown). */
  beforeTurn(): Promise<void>;
  /**
   * The turn's usage reached the budget: save what it spent and park the run (`RunParked` is thrown).
   * Returns only when the store finds the run within its budget after all; the step goes on.
   */
  budgetStop(): Promise<void>;
}

function conversationChannel(run: AgentStepRun, node: CompiledAgentNode): AgentChannel {
  const where = { runId: run.runId, path: node.path, visit: run.visit };
  // The host saves the conversation's usage per turn, so the store decides from saved facts alone.
  const check = async (when: "before_turn" | "during_turn") =>
    expectSaved(await run.port.checkBudget({ path: node.path, visit: run.visit, when, pending: {} }));
  return {
    beforeTurn: async () => {
      await check("before_turn");
    },
    async budgetStop() {
      // The host saw the limit reached in the turn's usage; the store decides by the same sums.
      await check("during_turn");
    },
    async deliver(key, body) {
      expectSaved(
        await run.port.enqueueMessage({
          messageId: visitMessageId(where, key),
          kind: "step_prompt",
          path: node.path,
          visit: run.visit,
          body,
          triggerTurn: true,
        }),
      );
    },
    next: (signal) => run.port.nextAgentEvent({ path: node.path, visit: run.visit }, signal),
  };
}

function isolatedChannel(run: AgentStepRun, node: CompiledAgentNode, isolated: OpenIsolated): AgentChannel {
  const { session, guard } = isolated;
  const stop = async (when: "before_turn" | "during_turn"): Promise<never> => {
    // The record first: a parked run takes no more writes from this claim.
    await isolated.settle("budget_exceeded");
    const limit = guard.reached(when) ?? guard.runReached ?? "usd";
    const checked = await run.port.checkBudget({ path: node.path, visit: run.visit, when, pending: {} });
    expectSaved(checked);
    // The store's sums fell short of what the session saw (a record it could not save): park anyway.
    const reason = guard.reason(node.path, limit);
    expectSaved(await run.port.parkRun(reason));
    throw new RunParked(reason);
  };
  return {
    deliver: async (_key, body) => session.deliver(body),
    next: (signal) => session.next(signal),
    beforeTurn: async () => {
      if (await isolated.overBudget("before_turn")) await stop("before_turn");
    },
    budgetStop: () => stop("during_turn"),
  };
}

interface OpenIsolated {
  session: IsolatedAgentSession;
  guard: BudgetGuard;
  /** Whether the run is at its budget: this session's own use, then the run's live spend as the host sums it. */
  overBudget(when: "before_turn" | "during_turn"): Promise<boolean>;
  settle(ended?: "budget_exceeded"): Promise<void>;
}

/**
 * Opens this attempt's isolated session and saves its record as the visit's `agent.session` effect
 * (ordinal: the attempt), so a crash leaves a reserved record behind and a retry opens a new one.
 */
async function openIsolated(
  run: AgentStepRun,
  node: CompiledAgentNode,
  placement: AgentPlacement,
  ctx: NodeContext,
): Promise<OpenIsolated> {
  if (!placement.isolated) {
    throw new NodeFailure(
      "node_failed",
      `Agent step ${node.path} runs in an isolated Pi session, which this process cannot open.`,
    );
  }
  const options = node.isolated;
  const cwd = options.cwd ?? placement.workingDir ?? process.cwd();
  const tools = options.tools ?? READ_ONLY_TOOLS;
  const id = effectId(
    nodeVisitId({ runId: run.runId, path: node.path, visit: run.visit }),
    AGENT_SESSION_EFFECT,
    run.attempt - 1,
  );
  // Before every agent step: a run at its limit parks here, before a session or its record exists.
  const state = expectSaved(
    await run.port.checkBudget({ path: node.path, visit: run.visit, when: "before_turn", pending: {} }),
  );
  const guard = new BudgetGuard(state.budget, state.spend);
  const overBudget = async (when: "before_turn" | "during_turn"): Promise<boolean> => {
    if (guard.reached(when) !== null) return true;
    // The run spends elsewhere while this session runs (parallel branches' sessions, the conversation's
    // replies): the host adds what every live session reported to the saved spend. This session's
    // report, named by its record, replaces its last one there until the record is saved.
    const asked = await run.port
      .checkBudget({
        path: node.path,
        visit: run.visit,
        when,
        pending: guard.pending(),
        session: id,
        askOnly: true,
      })
      .catch(() => null);
    if (asked === null || asked.kind === "conflict" || asked.kind === "recoveryRequired") return true;
    guard.runReached = asked.value.reached;
    return asked.value.reached !== null;
  };
  const request: JsonValue = {
    attempt: run.attempt,
    model: options.model ?? null,
    thinking: options.thinking ?? null,
    tools: [...tools],
  };
  expectSaved(
    await run.port.reserveEffect({
      effectId: id,
      path: node.path,
      visit: run.visit,
      effectType: AGENT_SESSION_EFFECT,
      ordinal: run.attempt - 1,
      mode: "idempotent",
      request,
    }),
  );
  const opened = await placement.isolated.open({
    runId: run.runId,
    path: node.path,
    visit: run.visit,
    attempt: run.attempt,
    outputSchema: node.outputSchema as JsonValue,
    tools,
    cwd,
    progress: (update) => modelProgress(ctx, update),
    usage: (usage) => {
      guard.record(usage);
      return overBudget("during_turn");
    },
    ...(options.model === undefined ? {} : { model: options.model }),
    ...(options.thinking === undefined ? {} : { thinking: options.thinking }),
    ...(options.systemPrompt === undefined ? {} : { systemPrompt: options.systemPrompt }),
  });
  if (!opened.ok) {
    await run.port.settleEffect({ effectId: id, result: { ok: false, error: opened.error } });
    throw new NodeFailure(opened.error.code, opened.error.message);
  }
  const { session } = opened;
  const signal = ctx.signal;
  let stoppedBy: "budget_exceeded" | undefined;
  return {
    session,
    guard,
    overBudget,
    async settle(by) {
      stoppedBy ??= by;
      // A deadline, a cancel or the budget stops the session midway: the record keeps what it cost so far.
      const ended =
        stoppedBy !== undefined
          ? { ended: stoppedBy }
          : !signal.aborted
            ? {}
            : {
                ended:
                  signal.reason instanceof DeadlinePassed ? ("timed_out" as const) : ("cancelled" as const),
              };
      const report = { ...(await session.close()), ...ended };
      // The record is bookkeeping: a run whose claim moved on (a cancel) may refuse it.
      await run.port
        .settleEffect({ effectId: id, result: { ok: true, value: report as unknown as JsonValue } })
        .catch(() => undefined);
    },
  };
}

export async function runAgent(
  run: AgentStepRun,
  node: CompiledAgentNode,
  ctx: NodeContext,
  workspace: string | null = null,
): Promise<unknown> {
  const kind = run.agents ? agentSessionFor(node, run.agents.origin) : "conversation";
  if (kind === "conversation") {
    return stepLoop(run, node, ctx, conversationChannel(run, node), workspace);
  }
  // An isolated session opens in the run's workspace unless the step names its own folder.
  const placement = run.agents as AgentPlacement;
  const where = workspace === null ? placement : { ...placement, workingDir: workspace };
  const isolated = await openIsolated(run, node, where, ctx);
  try {
    return await stepLoop(run, node, ctx, isolatedChannel(run, node, isolated), workspace);
  } finally {
    await isolated.settle();
  }
}

/** The model's `update`, reported as the step's `ctx.progress`; a refusal goes back to the model. */
function modelProgress(ctx: NodeContext, update: unknown): { ok: true } | { ok: false; problem: string } {
  try {
    ctx.progress(update as never);
    return { ok: true };
  } catch (error) {
    if (isProgressInvalid(error)) return { ok: false, problem: error.problem };
    throw error;
  }
}

/** The step contract: prompt, then submissions checked and answered until one is accepted. */
async function stepLoop(
  run: AgentStepRun,
  node: CompiledAgentNode,
  ctx: NodeContext,
  channel: AgentChannel,
  workspace: string | null,
): Promise<unknown> {
  const prompt = stepPrompt(node.prompt(ctx), node, {
    runId: run.runId,
    visit: run.visit,
    attempt: run.attempt,
    ...(workspace === null ? {} : { workspace }),
  });
  await channel.beforeTurn();
  await channel.deliver(`step:${run.attempt}`, prompt);
  // Turns the model ended without submitting (the reminder budget), and turns that were not the
  // model's doing: lost ones in a row (their bound) and in all (for the retry messages' identities).
  let nudges = 0;
  let lostInARow = 0;
  let lostTurns = 0;
  for (;;) {
    const event = await channel.next(ctx.signal);
    if (event.type === "paused") {
      // The visit stays open: a resume starts a new attempt, which delivers the step prompt again.
      const reason = {
        code: "paused" as const,
        message: `Paused during ${node.path}: its turn was interrupted.`,
      };
      expectSaved(await run.port.parkRun(reason));
      throw new RunParked(reason);
    }
    if (event.type === "budget_exceeded") {
      await channel.budgetStop();
      continue;
    }
    // Not a lost turn: another turn would fail the same way, so the step fails at once.
    if (event.type === "model_unavailable") throw new NodeFailure("model_unavailable", event.message);
    if (event.type === "turn_ended") {
      switch (event.ending) {
        case "completed":
          // The model ended its turn without submitting: remind it, within the budget.
          lostInARow = 0;
          if (nudges >= MAX_AGENT_NUDGES) {
            throw new NodeFailure(
              "node_failed",
              `The model ended ${nudges + 1} turns without submitting ${node.path}.`,
            );
          }
          nudges += 1;
          await channel.beforeTurn();
          await channel.deliver(
            reminderKind("nudge", run.attempt, nudges),
            `Workflow step ${node.path} is still open. Complete it by calling the workflow tool with ${SUBMIT_CALL}, the output matching the step contract's schema.`,
          );
          continue;
        case "error":
        case "lost": {
          lostInARow += 1;
          if (lostInARow >= MAX_LOST_AGENT_TURNS) {
            // The visit stays open: a resume starts a new attempt, which delivers the step prompt again.
            const reason = {
              code: "agent_turns_lost" as const,
              message: `Agent step ${node.path} lost ${lostInARow} turns in a row (Pi stopped or the model provider failed); resume the run to prompt it again.`,
              path: node.path,
            };
            expectSaved(await run.port.parkRun(reason));
            throw new RunParked(reason);
          }
          lostTurns += 1;
          // The model may never have seen the prompt (a crash) or its answer was cut off: ask again.
          const why = event.ending === "error" ? "the model provider failed" : "the turn was lost";
          await channel.beforeTurn();
          await channel.deliver(
            reminderKind("retry", run.attempt, lostTurns),
            `Workflow step ${node.path} is still open (${why} before it was submitted).\n\n${prompt}`,
          );
          continue;
        }
        case "model_unavailable":
          // The Pi session's own model: the provider's text stayed in Pi, this says what to do.
          throw new NodeFailure(
            "model_unavailable",
            `Agent step ${node.path}: the provider refused the Pi session's model for good (no valid credentials, a model it does not know, or a spent quota): fix the model in Pi (/model, /login), then start the workflow again.`,
          );
        default:
          return event.ending satisfies never;
      }
    }
    // A submission is the model at work: a lost turn after it starts a new streak.
    lostInARow = 0;
    const parsed = node.output.safeParse(event.output);
    if (!parsed.success) {
      event.respond({ accepted: false, reason: rejectedOutput(parsed.error.issues) });
      continue;
    }
    const problem = node.validate?.(parsed.data, ctx);
    if (problem) {
      event.respond({ accepted: false, reason: `Output rejected: ${problem}. Fix it and submit again.` });
      continue;
    }
    event.respond({ accepted: true });
    return parsed.data;
  }
}
