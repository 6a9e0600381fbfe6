import { isActiveStatus, isTerminalStatus, type RunSummary } from "@piw/protocol";
import type { WorkflowActionName } from "./workflow-actions.js";

/** One suggestion, as Pi's editor takes it: `value` replaces everything typed after `/workflow `. */
export interface CompletionItem {
  value: string;
  label: string;
  description?: string;
}

/** What the completions draw on: workflow names found here and this session's runs, newest first. */
export interface CompletionSources {
  workflows: readonly string[];
  runs: readonly RunSummary[];
}

const MAX_ITEMS = 20;

/** The verbs, what they do, and which of the session's runs each one may take. */
const VERBS: ReadonlyArray<{ verb: WorkflowActionName; about: string; runs?: (run: RunSummary) => boolean }> =
  [
    { verb: "list", about: "workflows here and this session's runs" },
    { verb: "status", about: "a run's state", runs: () => true },
    { verb: "pause", about: "pause a run", runs: (run) => isActiveStatus(run.status) },
    { verb: "resume", about: "resume a parked run", runs: (run) => run.status === "parked" },
    { verb: "cancel", about: "cancel a run", runs: (run) => !isTerminalStatus(run.status) },
    { verb: "restart", about: "run a finished run again", runs: (run) => isTerminalStatus(run.status) },
    {
      verb: "answer",
      about: "answer a run waiting at a checkpoint",
      runs: (run) => run.outcome === "waiting",
    },
    { verb: "submit", about: "the output the current step asks for" },
  ];

/**
 * Suggestions for `/workflow <prefix>`: the first word completes to a verb or a workflow name (a
 * name starts it); after a run verb, the word completes to one of this session's runs that verb
 * can take. Anything else (a task, JSON) has no suggestions: null.
 */
export function workflowCompletions(prefix: string, sources: CompletionSources): CompletionItem[] | null {
  const text = prefix.trimStart();
  const space = text.search(/\s/);
  const items = space < 0 ? firstWords(text, sources.workflows) : runIds(text, space, sources.runs);
  return items.length === 0 ? null : items.slice(0, MAX_ITEMS);
}

function firstWords(word: string, workflows: readonly string[]): CompletionItem[] {
  const verbs = VERBS.filter(({ verb }) => verb.startsWith(word)).map(({ verb, about }) => ({
    value: verb === "list" ? verb : `${verb} `,
    label: verb,
    description: about,
  }));
  const names = workflows
    .filter((name) => name.startsWith(word))
    .map((name) => ({ value: `${name} `, label: name, description: "start this workflow" }));
  return [...verbs, ...names];
}

function runIds(text: string, space: number, runs: readonly RunSummary[]): CompletionItem[] {
  const verb = text.slice(0, space);
  const typed = text.slice(space).trimStart();
  const takes = VERBS.find((entry) => entry.verb === verb)?.runs;
  // Only the word right after the verb is a run ID; `answer <runId> <json>` completes no further.
  if (takes === undefined || /\s/.test(typed)) return [];
  return runs
    .filter((run) => takes(run) && run.runId.startsWith(typed))
    .map((run) => ({
      value: `${verb} ${run.runId}`,
      label: run.runId,
      description: `${run.workflowName} (${run.status})`,
    }));
}

/**
 * This session's runs for completions, held between keystrokes: the first completion (and the first
 * after `stale()`, when a command changed the runs) waits for the host's list; later ones answer
 * from the held list at once and refresh it in the background once it is older than `maxAgeMs`.
 */
export class RecentRuns {
  private runs: readonly RunSummary[] = [];
  private fetchedAt: number | undefined;
  private loading: Promise<void> | undefined;

  constructor(
    private readonly load: () => Promise<readonly RunSummary[]>,
    private readonly maxAgeMs = 2000,
  ) {}

  async get(): Promise<readonly RunSummary[]> {
    const fetchedAt = this.fetchedAt;
    if (fetchedAt === undefined || Date.now() - fetchedAt > this.maxAgeMs) {
      const loading = this.refresh();
      if (fetchedAt === undefined) await loading;
    }
    return this.runs;
  }

  stale(): void {
    this.fetchedAt = undefined;
  }

  private refresh(): Promise<void> {
    this.loading ??= this.load()
      .then((runs) => {
        this.runs = runs;
        this.fetchedAt = Date.now();
      })
      // No host or no session yet: no run suggestions this time; typing goes on.
      .catch(() => undefined)
      .finally(() => {
        this.loading = undefined;
      });
    return this.loading;
  }
}
