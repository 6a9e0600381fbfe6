import { readFileSync } from "node:fs";
import type { RunHistory, RunView } from "@piw/protocol";

// What every run must have become, whatever the kills did: checked by the soak for each run as it
// ends (completed or cancelled) and again at the end.

/** One execution of an effect: the line its action wrote before it did its work. */
export interface LedgerLine {
  tag: string;
  path: string;
  visit: number;
  startedAt: number;
}

/** The ledger's lines, and how many were torn by a kill in the middle of their write. */
export function readLedger(file: string): { lines: LedgerLine[]; torn: number } {
  let text = "";
  try {
    text = readFileSync(file, "utf8");
  } catch {
    return { lines: [], torn: 0 };
  }
  const lines: LedgerLine[] = [];
  let torn = 0;
  for (const line of text.split("\n")) {
    if (line === "") continue;
    try {
      lines.push(JSON.parse(line) as LedgerLine);
    } catch {
      // The execution started, but its line cannot be attributed: counted, not matched.
      torn += 1;
    }
  }
  return { lines, torn };
}

/** What a workflow's completed runs must show: every node, which of them save an effect. */
export interface Expected {
  paths: string[];
  actions: number;
  /** Nodes a join `any` may leave cancelled or not run. */
  losers: ReadonlySet<string>;
}

export interface RunCheck {
  problems: string[];
  /** Executions of this run's effects that started after the store had settled them. */
  reExecuted: number;
  executions: number;
}

const ENDS = new Set(["run.completed", "run.failed", "run.timed_out", "run.cancelled"]);

/** A map node's saved item list: the engine's own effect, with no ledger line of an action. */
const MAP_LIST = "map.items";

/** The effects the workflows' actions performed (a map's saved list aside). */
function actionEffects(history: RunHistory): RunHistory["effects"] {
  return history.effects.filter((e) => e.effectType !== MAP_LIST);
}

/** The run's trace holds exactly one end: a run never ends twice, whatever was killed. */
function endsOnce(history: RunHistory, problems: string[]): void {
  const ends = history.events.filter((e) => ENDS.has(e.type)).map((e) => e.type);
  if (ends.length !== 1) problems.push(`ended ${ends.length} times (${ends.join(", ")})`);
}

/** No execution of a settled effect started after it was settled; every settled one ran. */
function settledOnce(history: RunHistory, mine: LedgerLine[], problems: string[]): number {
  let late = 0;
  for (const effect of actionEffects(history)) {
    if (effect.status !== "settled" || effect.settledAt === null) continue;
    const runs = mine.filter((line) => line.path === effect.path && line.visit === effect.visit);
    if (runs.length === 0) problems.push(`effect at ${effect.path} settled without running`);
    const after = runs.filter((line) => line.startedAt > (effect.settledAt as number)).length;
    if (after > 0) problems.push(`effect at ${effect.path} ran ${after} times after it settled`);
    late += after;
  }
  return late;
}

/** A completed run: every node succeeded once (a join's losers aside), every effect settled. */
export function checkCompleted(
  expected: Expected,
  view: RunView,
  history: RunHistory,
  mine: LedgerLine[],
): RunCheck {
  const problems: string[] = [];
  endsOnce(history, problems);
  const seen = view.nodes.map((n) => n.path).sort();
  if (seen.join() !== [...expected.paths].sort().join())
    problems.push(`nodes in the view: ${seen.join(", ")}`);
  for (const node of view.nodes) {
    if (expected.losers.has(node.path)) {
      if (node.state === "succeeded" || node.visits > 1) problems.push(`loser ${node.path} is ${node.state}`);
    } else if (node.state !== "succeeded" || node.visits !== 1) {
      problems.push(`${node.path} is ${node.state} after ${node.visits} visits`);
    }
  }
  const effects = actionEffects(history);
  if (effects.length !== expected.actions) {
    problems.push(`${effects.length} effects saved, expected ${expected.actions}`);
  }
  for (const effect of effects) {
    if (effect.status !== "settled") problems.push(`effect at ${effect.path} is ${effect.status}`);
  }
  const reExecuted = settledOnce(history, mine, problems);
  return { problems, reExecuted, executions: mine.length };
}

/**
 * A cancelled run: cancel wins. It ended once, as cancelled, and no effect of it was reserved after
 * the cancel's reply came back (`cancelledBy`: the time of that reply, when it came).
 */
export function checkCancelled(
  history: RunHistory,
  mine: LedgerLine[],
  cancelledBy: number | null,
): RunCheck {
  const problems: string[] = [];
  endsOnce(history, problems);
  const last = history.events.filter((e) => ENDS.has(e.type)).at(-1);
  if (last !== undefined && last.type !== "run.cancelled") problems.push(`cancelled run ended ${last.type}`);
  if (cancelledBy !== null) {
    for (const effect of history.effects) {
      if (effect.reservedAt > cancelledBy)
        problems.push(`effect at ${effect.path} reserved after the cancel`);
    }
    const starts = mine.filter((line) => {
      const effect = history.effects.find((e) => e.path === line.path && e.visit === line.visit);
      return effect === undefined || effect.reservedAt > cancelledBy;
    });
    if (starts.length > 0)
      problems.push(`${starts.length} effect executions with no reserve before the cancel`);
  }
  const reExecuted = settledOnce(history, mine, problems);
  return { problems, reExecuted, executions: mine.length };
}
