import { wrapTextWithAnsi } from "@earendil-works/pi-tui";
import { AGENT_SESSION_EFFECT, type RunHistory, type RunView } from "@piw/protocol";
import { stepTranscriptLines } from "./agent-session-lines.js";
import { ANSWERED_BY_WORDS, quotedExample } from "./answer-example.js";
import { formatDuration } from "./format.js";
import { detectGlyphs, type Glyphs } from "./glyphs.js";
import { branchIndex, branchView, forkBranches, joinWords, localPath } from "./forks.js";
import { jsonLines } from "./json-lines.js";
import {
  agentProgressOf,
  agentProgressWords,
  nodeProgressOf,
  progressBar,
  progressCount,
  progressDetail,
} from "./progress-words.js";
import { clipToWidth } from "./text-width.js";
import { plainTheme, type Theme } from "./theme.js";
import { NODE_STATE_WORDS, NODE_TINTS } from "./words.js";

export interface InspectorOptions {
  width: number;
  theme?: Theme;
  /** Lines a prompt may take before it is folded. */
  maxPromptLines?: number;
  /** When given, a running node shows how long it has run so far. */
  now?: number;
  glyphs?: Glyphs;
}

/** Columns of the progress bar in the inspector. */
const INSPECTOR_BAR_CELLS = 20;

const EFFECT_TINTS = { reserved: "yellow", settled: "green", failed: "red" } as const;

/**
 * Everything saved about one node: its state, then per visit and attempt its output (JSON,
 * pretty-printed and folded) or error, its effects with their state, the prompts sent for it and
 * the Pi turns that answered them. `history` null means it has not arrived yet.
 */
export function renderInspector(
  view: RunView,
  history: RunHistory | null,
  path: string,
  options: InspectorOptions,
): string[] {
  const theme = options.theme ?? plainTheme;
  const width = Math.max(10, options.width);
  const maxPromptLines = options.maxPromptLines ?? 12;
  const g = options.glyphs ?? detectGlyphs();
  const lines: string[] = [];
  const push = (line: string) => lines.push(clipToWidth(line, width, g.ellipsis));
  const heading = (text: string) => push(theme("bold", text));
  // Long JSON lines wrap, continuing under their own indentation, so a fold's note stays visible.
  const pushJson = (indent: string, line: string) => {
    const inner = line.length - line.trimStart().length;
    const lead = indent + " ".repeat(inner);
    const room = Math.max(8, width - lead.length - 2);
    wrapTextWithAnsi(line.trimStart(), room).forEach((part, i) => {
      push(`${lead}${i === 0 ? "" : "  "}${part}`);
    });
  };
  const node = view.nodes.find((n) => n.path === path);
  if (node === undefined) {
    push(`no node ${path} in this run`);
    return lines;
  }
  const name = node.path.slice(node.path.lastIndexOf("/") + 1);
  const title = node.title !== "" && node.title !== name && node.title !== node.path ? `  ${node.title}` : "";
  heading(`${g.kind[node.kind]} ${node.path}  ${node.kind}${title}`);
  let timing = "";
  if (node.startedAt !== null && node.finishedAt !== null)
    timing = `  ${formatDuration(node.finishedAt - node.startedAt)}`;
  else if (node.state === "running" && node.startedAt !== null && options.now !== undefined)
    timing = `  ${formatDuration(options.now - node.startedAt)} so far`;
  push(
    `${theme(NODE_TINTS[node.state], `${g.node[node.state]} ${NODE_STATE_WORDS[node.state]}`)}  visits ${node.visits}  attempt ${node.attempt}${timing}${node.errorCode === null ? "" : `  ${theme("red", node.errorCode)}`}`,
  );
  // What the running visit reports now: live only, so it is never part of the saved history below.
  const progress = nodeProgressOf(view, node);
  if (progress !== undefined) {
    const bar = Math.max(0, Math.min(INSPECTOR_BAR_CELLS, width - 24));
    const head = [progressCount(progress), progressBar(progress, bar, g), progress.message ?? ""]
      .filter((part) => part !== "")
      .join("  ");
    push(`progress  ${theme("cyan", head)}`);
    for (const line of progressDetail(progress, options.now)) push(line);
  }
  const agent = agentProgressOf(view, node);
  if (agent !== undefined) push(`agent     ${theme("cyan", agentProgressWords(agent, g.ascii))}`);
  // A parallel node: how its join is met, and each branch's state and node running now.
  const fork = view.manifest.forks?.find((f) => f.path === path);
  if (fork !== undefined) {
    push(joinWords(fork));
    const refs = branchIndex(view.manifest);
    for (const ref of forkBranches(fork)) {
      const branch = branchView(ref, view);
      const at = branch.running.map((n) => localPath(n.path, refs)).join(", ");
      push(
        `  ${theme(NODE_TINTS[branch.state], `${g.node[branch.state]} ${branch.label}`)}  ${NODE_STATE_WORDS[branch.state]}${at === "" ? "" : ` at ${at}`}`,
      );
    }
  }
  const checkpoint = view.outcome === "waiting" && view.checkpoint?.path === path ? view.checkpoint : null;
  if (checkpoint) {
    push("");
    heading(
      `waiting for an answer (visit ${checkpoint.visit}), answered by ${ANSWERED_BY_WORDS[checkpoint.answeredBy]}`,
    );
    const prompt = wrapTextWithAnsi(checkpoint.prompt, width - 2);
    for (const line of prompt.slice(0, maxPromptLines)) push(`  ${line}`);
    if (prompt.length > maxPromptLines)
      push(theme("dim", `  … ${prompt.length - maxPromptLines} more lines`));
    if (checkpoint.answerSchema !== null) {
      push("answer schema");
      for (const line of jsonLines(checkpoint.answerSchema, { maxEntries: 12 })) pushJson("  ", line);
    }
    push(`example  ${quotedExample(checkpoint)}`);
  }
  if (history === null) {
    push(theme("dim", "loading the run's history…"));
    return lines;
  }
  const steps = history.steps.filter((step) => step.path === path);
  if (steps.length === 0) push(theme("dim", "not visited yet"));
  for (const step of steps) {
    push("");
    const took =
      step.finishedAt !== null
        ? formatDuration(step.finishedAt - step.startedAt)
        : options.now === undefined
          ? "still running"
          : `${formatDuration(options.now - step.startedAt)} so far`;
    heading(`visit ${step.visit}, attempt ${step.attempt}: ${step.status.replace("_", " ")}  ${took}`);
    if (step.error !== null || step.errorCode !== null) {
      push(theme("red", `error ${step.errorCode ?? ""}`.trimEnd()));
      for (const line of wrapTextWithAnsi(step.error ?? "", width - 2)) push(`  ${line}`);
    }
    if (step.output !== null) {
      push("output");
      for (const line of jsonLines(step.output)) pushJson("  ", line);
    }
  }
  // An isolated agent step's session records: what it cost and its transcript, not raw JSON.
  if (history.effects.some((e) => e.path === path && e.effectType === AGENT_SESSION_EFFECT)) {
    push("");
    heading("isolated session");
    const transcript = stepTranscriptLines(history, path);
    for (const line of transcript.slice(0, maxPromptLines * 4))
      for (const part of wrapTextWithAnsi(line, width - 2)) push(part);
    if (transcript.length > maxPromptLines * 4)
      push(
        theme(
          "dim",
          `  ${g.ellipsis} ${transcript.length - maxPromptLines * 4} more lines (piw status --step)`,
        ),
      );
  }
  const effects = history.effects.filter(
    (effect) => effect.path === path && effect.effectType !== AGENT_SESSION_EFFECT,
  );
  if (effects.length > 0) {
    push("");
    heading("effects");
    for (const effect of effects) {
      push(
        `  ${effect.effectType} #${effect.ordinal} (visit ${effect.visit}, ${effect.mode})  ${theme(EFFECT_TINTS[effect.status], effect.status)}`,
      );
      if (effect.result !== null)
        for (const line of jsonLines(effect.result, { maxEntries: 10 })) push(`    ${line}`);
      if (effect.error !== null) push(theme("red", `    ${effect.errorCode ?? "error"}: ${effect.error}`));
    }
  }
  const messages = history.messages.filter((message) => message.path === path);
  if (messages.length > 0) {
    push("");
    heading("prompts");
    for (const message of messages) {
      push(`  ${message.kind} (visit ${message.visit ?? "-"})  ${message.status}`);
      const body = wrapTextWithAnsi(message.body, width - 4);
      for (const line of body.slice(0, maxPromptLines)) push(`    ${line}`);
      if (body.length > maxPromptLines)
        push(theme("dim", `    ${g.ellipsis} ${body.length - maxPromptLines} more lines`));
    }
  }
  const turns = history.turns.filter((turn) => turn.path === path);
  if (turns.length > 0) {
    push("");
    heading("turns");
    for (const turn of turns) {
      const took = turn.endedAt === null ? "open" : formatDuration(turn.endedAt - turn.startedAt);
      push(
        `  ${turn.turnId} (visit ${turn.visit ?? "-"})  ${turn.status}${turn.endReason === null ? "" : `: ${turn.endReason}`}  ${took}`,
      );
    }
  }
  return lines;
}
