import {
  AGENT_SESSION_EFFECT,
  type AgentProgress,
  agentSessionReportSchema,
  CONVERSATION_RESULT_MAX,
  CONVERSATION_TEXT_MAX,
  type ConversationEntry,
  type ConversationVisit,
  graphManifestSchema,
  type HistoryEffect,
  type HistoryStep,
  type StepConversation,
  type TranscriptEntry,
  type TurnEntries,
} from "@piw/protocol";
import type { RunStore } from "@piw/store";
import type { LiveVisitTranscript } from "./live-transcripts.js";
import { readTurnTranscript } from "./pi-session-entries.js";

export type ConversationReader = Pick<
  RunStore,
  "getRun" | "readRunManifest" | "readRunHistory" | "listTurnEntries"
>;

/** The tool an agent step submits its output with, in an isolated session and in Pi alike. */
const SUBMIT_TOOL = "workflow";
/** The most entries one visit carries: the last ones, which led to its outcome. */
const VISIT_ENTRIES_MAX = 200;

function cut(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max)}… (${text.length - max} more characters)`;
}

/** The `output` of a submit call, when the call is one; undefined for any other call. */
function submittedOutput(entry: TranscriptEntry & { role: "tool_call" }): string | undefined {
  if (entry.tool !== SUBMIT_TOOL) return undefined;
  try {
    const args = JSON.parse(entry.arguments) as { action?: unknown; output?: unknown };
    if (args.action !== "submit") return undefined;
    return cut(JSON.stringify(args.output ?? null), CONVERSATION_TEXT_MAX);
  } catch {
    // Arguments the session cut to its bound are not JSON any more: shown as a plain call.
    return undefined;
  }
}

/** An isolated session's saved transcript as conversation entries: a submit and its verdict named. */
function transcriptEntries(transcript: readonly TranscriptEntry[]): ConversationEntry[] {
  const entries: ConversationEntry[] = [];
  let submitting = false;
  for (const entry of transcript) {
    switch (entry.role) {
      case "user":
        entries.push({ type: "prompt", text: cut(entry.text, CONVERSATION_TEXT_MAX) });
        break;
      case "assistant":
        entries.push({ type: "text", text: cut(entry.text, CONVERSATION_TEXT_MAX) });
        break;
      case "tool_call": {
        const output = submittedOutput(entry);
        submitting = output !== undefined;
        entries.push(
          output === undefined
            ? { type: "tool_call", tool: entry.tool, arguments: cut(entry.arguments, CONVERSATION_TEXT_MAX) }
            : { type: "submit", output },
        );
        break;
      }
      case "tool_result":
        if (submitting && entry.tool === SUBMIT_TOOL) {
          entries.push({
            type: "verdict",
            accepted: !entry.isError,
            text: cut(entry.text, CONVERSATION_RESULT_MAX),
          });
        } else {
          entries.push({
            type: "tool_result",
            tool: entry.tool,
            text: cut(entry.text, CONVERSATION_RESULT_MAX),
            isError: entry.isError,
          });
        }
        submitting = false;
        break;
      default:
        entry satisfies never;
    }
  }
  return entries;
}

/** What the host holds of running steps in memory: isolated steps' facts, every step's live transcript. */
export interface LiveConversationSource {
  facts(path: string, visit: number): AgentProgress[];
  live(path: string, visit: number): LiveVisitTranscript | undefined;
}

function bounded(entries: ConversationEntry[]): Pick<ConversationVisit, "entries" | "omitted"> {
  const omitted = Math.max(0, entries.length - VISIT_ENTRIES_MAX);
  return { entries: entries.slice(omitted), omitted };
}

function liveEntries(facts: readonly AgentProgress[]): ConversationEntry[] {
  return facts.map((fact) => ({ type: "live", kind: fact.kind, text: fact.text }));
}

/**
 * One isolated attempt: its saved transcript once it ended; until then its live transcript (what the
 * model streamed and called so far), or the facts it reported when it sent no transcript yet.
 */
function isolatedVisit(effect: HistoryEffect, source: LiveConversationSource): ConversationVisit {
  const parsed = agentSessionReportSchema.safeParse(effect.result);
  const open = effect.status === "reserved";
  const attempt = effect.ordinal + 1;
  const held = open ? source.live(effect.path, effect.visit) : undefined;
  const live = held?.attempt === attempt ? held.live : undefined;
  let entries: ConversationEntry[] = [];
  let omitted = 0;
  if (parsed.success) {
    entries = transcriptEntries(parsed.data.transcript);
    omitted = parsed.data.transcriptOmitted;
  } else if (live !== undefined) {
    entries = transcriptEntries(live.entries);
    omitted = live.omitted;
  } else if (open) entries = liveEntries(source.facts(effect.path, effect.visit));
  const shown = bounded(entries);
  return {
    visit: effect.visit,
    attempt,
    mode: "isolated",
    state: open ? "open" : "settled",
    entries: shown.entries,
    omitted: omitted + shown.omitted,
  };
}

/**
 * One visit of a step that runs in the user's Pi session: its turns' messages, read from Pi's own
 * session file (piw does not copy them). While the step runs, its ended turns' messages and then the
 * open turn's live transcript (what the extension reported of it so far). A turn whose entries cannot
 * be read (the file moved) shows the prompt piw sent and the output it accepted.
 */
function conversationVisit(
  step: HistoryStep,
  prompts: readonly string[],
  turns: ReadonlyArray<TurnEntries>,
  live: LiveVisitTranscript | undefined,
): ConversationVisit {
  const read = turns.map(readTurnTranscript);
  const state = step.status === "running" ? "open" : "settled";
  if (state === "open" && live !== undefined) {
    const ended = read.flatMap((t) => t ?? []);
    // Pi reports piw's step prompt as a custom message, which a live transcript does not keep: the
    // first turn shows the prompt piw sent.
    const sent: TranscriptEntry[] =
      ended.length === 0 && live.live.omitted === 0
        ? prompts.slice(-1).map((text) => ({ role: "user", text }))
        : [];
    const entries = transcriptEntries([...sent, ...ended, ...live.live.entries]);
    const shown = bounded(entries);
    const omitted = live.live.omitted + shown.omitted;
    return { visit: step.visit, attempt: step.attempt, mode: "conversation", state, ...shown, omitted };
  }
  if (read.length > 0 && read.every((t) => t !== null)) {
    const entries = transcriptEntries(read.flatMap((t) => t ?? []));
    return { visit: step.visit, attempt: step.attempt, mode: "conversation", state, ...bounded(entries) };
  }
  const entries: ConversationEntry[] = prompts.map((text) => ({
    type: "prompt",
    text: cut(text, CONVERSATION_TEXT_MAX),
  }));
  if (step.status === "succeeded" && step.output !== null) {
    entries.push({ type: "submit", output: cut(JSON.stringify(step.output), CONVERSATION_TEXT_MAX) });
    entries.push({
      type: "verdict",
      accepted: true,
      text: `Accepted: workflow step ${step.path} is complete.`,
    });
  }
  return {
    visit: step.visit,
    attempt: step.attempt,
    mode: "conversation",
    state,
    ...bounded(entries),
  };
}

/**
 * `runs.conversation`: what the agent said and did in one step, per visit and attempt. Null for an
 * unknown run; no visits for a node that is not an agent step or was not reached.
 */
export function readStepConversation(
  reader: ConversationReader,
  runId: string,
  path: string,
  source: LiveConversationSource,
): StepConversation | null {
  const run = reader.getRun(runId);
  if (!run) return null;
  const manifest = graphManifestSchema.safeParse(reader.readRunManifest(runId));
  const node = manifest.success ? manifest.data.nodes.find((n) => n.path === path) : undefined;
  const answer = { runId, path, revision: run.revision, visits: [] as ConversationVisit[] };
  if (node?.kind !== "agent") return answer;
  const records = reader.readRunHistory(runId);
  const sessions = records.effects.filter((e) => e.path === path && e.effectType === AGENT_SESSION_EFFECT);
  if (sessions.length > 0) {
    answer.visits = sessions.map((effect) => isolatedVisit(effect, source));
    return answer;
  }
  const turns = reader.listTurnEntries(runId, path);
  answer.visits = records.steps
    .filter((step) => step.path === path)
    .map((step) =>
      conversationVisit(
        step,
        records.messages
          .filter((m) => m.path === path && m.visit === step.visit && m.kind === "step_prompt")
          .map((m) => m.body),
        turns.filter((t) => t.visit === step.visit),
        source.live(path, step.visit),
      ),
    );
  return answer;
}
