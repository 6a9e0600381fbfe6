import {
  type ActionContext,
  action,
  agent,
  compute,
  decision,
  decisionEdge,
  defineWorkflow,
  includeWorkflow,
  notify,
  type ScopeContext,
  shell,
  WorkflowError,
  wait,
} from "piw";
import { z } from "zod";
import autoimplement from "./autoimplement.js";
import {
  decideNext,
  type Ending,
  type MonitorState,
  monitorStateSchema,
  observationSchema,
  outputTail,
  parsed,
} from "./monitor-decide.js";
import {
  type Brief,
  type Implemented,
  implementedEntry,
  implementedOf,
  implementInput,
  repairBranch,
} from "./monitor-implement.js";
import { type Ctx, goalOf, type Input, inputSchema, limitsOf, MINUTE_MS } from "./monitor-input.js";
import {
  checkInspection,
  checkOutputOf,
  inspectionSchema,
  judgesFailures,
  observationOf,
} from "./monitor-observe.js";
import {
  actPrompt,
  checkReport,
  INSPECTOR_SYSTEM_PROMPT,
  implementTask,
  inspectPrompt,
  repairPrompt,
} from "./monitor-prompts.js";

const INSPECT_TIMEOUT_MS = 10 * MINUTE_MS;
const STEP_TIMEOUT_MS = 30 * MINUTE_MS;
/** What act and repair may use when they run isolated (a run started from a shell); Pi's own names. */
const WORK_TOOLS = ["read", "bash", "edit", "write", "grep", "find", "ls"];

const stepSchema = z.object({
  summary: z.string().min(1).max(1200),
  changed: z.array(z.string().min(1).max(500)).max(50),
});

const decidedSchema = z.object({ state: monitorStateSchema, seen: observationSchema });
type Decided = z.infer<typeof decidedSchema>;

const previousOf = (outputs: Record<string, unknown>): MonitorState | null =>
  outputs.decide === undefined ? null : parsed(decidedSchema, outputs.decide).state;

const decidedOf = (outputs: Record<string, unknown>): Decided => parsed(decidedSchema, outputs.decide);

function decide(ctx: Ctx): Decided {
  const seen = observationOf(ctx);
  const state = decideNext(previousOf(ctx.outputs), seen, limitsOf(ctx.input), Date.now());
  // The run's progress, kept on view while it waits for the next check: checks done, the reason,
  // and the latest it ends (the deadline, or its remaining checks at one per interval).
  ctx.progress({
    done: state.check,
    total: ctx.input.maxChecks,
    message: state.reason,
    eta: state.endsBy === null ? null : Date.parse(state.endsBy),
    scope: "run",
  });
  return { state, seen };
}

/** The repair's brief: autoimplement's task from the failure, and the branch for this check. */
function brief({ input, outputs, run }: ActionContext<Input>): Brief {
  const { state, seen } = decidedOf(outputs);
  return {
    task: implementTask(goalOf(input), seen, state.check, input.check ?? null),
    branch: repairBranch(run.id, state.check),
  };
}

interface MonitorReport {
  /** True when the goal was met or `stopWhen` held: the run completes; otherwise it fails after this. */
  met: boolean;
  ending: Ending;
  reason: string;
  checks: number;
  repairs: number;
  /** What each repair through autoimplement did, in order. */
  implemented: Implemented[];
  history: MonitorState["history"];
}

function finish({ outputs }: Ctx): MonitorReport {
  const { state } = decidedOf(outputs);
  // Only an ending reaches here: `next` sends everything else back round the loop.
  const ending = state.ending ?? "max_checks";
  return {
    met: ending === "met" || ending === "stop_when",
    ending,
    reason: state.reason,
    checks: state.check,
    repairs: state.repairs,
    implemented: implementedOf(outputs.implemented),
    history: state.history,
  };
}

/** Ends the run as failed, for scripts and CI: the report was saved as the previous step's output. */
function unmet({ outputs }: Ctx): never {
  const report = parsed(z.object({ ending: z.string(), reason: z.string() }), outputs.finish);
  throw new WorkflowError(`monitor ended without meeting its goal (${report.ending}): ${report.reason}`);
}

/**
 * monitor: keep checking a goal until it is met. Each round observes (a check command, or a read-only
 * inspector), decides (met, wait, act, repair, or stop), reports the check to the owning Pi session
 * without starting a turn, then acts, repairs or waits on the durable clock with no process alive.
 */
export default defineWorkflow({
  name: "monitor",
  title: "Monitor a goal",
  summary:
    "Check a goal on a schedule (a command or a read-only inspector), act or repair within its limits, until it is met.",
  input: inputSchema,
  textInput: "task",
  startAt: "observe",
  // A round is at most eight steps (observe, check, failed, inspect, decide, report, next, wait or a
  // step); an implement repair adds autoimplement's own, at most three times.
  maxSteps: 8 * 1000 + 3 * 2100 + 10,
  includes: {
    implementation: includeWorkflow(autoimplement, {
      title: "Repair through autoimplement",
      input: ({ input, outputs }: ScopeContext<Input>) => implementInput(outputs.brief, input),
    }),
  },
  nodes: {
    observe: decision({
      title: "Observe",
      choices: ["check", "inspect"],
      decide: ({ input }: Ctx) => (input.check === undefined ? "inspect" : "check"),
    }),
    check: shell({
      title: "Run the check",
      exec: ({ input }: Ctx) => ["sh", "-c", input.check ?? "exit 2", "monitor-check"],
      okExitCodes: [0, 1],
      parse: ({ exitCode, stdout, stderr }, { input }: Ctx) => ({
        met: exitCode === 0,
        output: outputTail(stdout, stderr),
        // Only a judge can tell whether words hold; a check that settles the goal needs none.
        inspect: exitCode !== 0 && input.stopWhen !== undefined,
      }),
      timeoutMs: (input: Input) => Math.round(input.checkTimeoutMinutes * MINUTE_MS),
    }),
    inspect: agent({
      session: "isolated",
      title: "Inspect the target",
      systemPrompt: INSPECTOR_SYSTEM_PROMPT,
      timeoutMs: INSPECT_TIMEOUT_MS,
      prompt: (ctx: Ctx) =>
        inspectPrompt(goalOf(ctx.input), {
          checkOutput: checkOutputOf(ctx),
          previous: previousOf(ctx.outputs),
        }),
      output: inspectionSchema,
      validate: checkInspection,
    }),
    decide: compute({ title: "Decide", run: decide }),
    report: notify({
      title: "Report the check",
      message: ({ input, outputs }: Ctx) => {
        const { state, seen } = decidedOf(outputs);
        return checkReport(state, seen, input.maxChecks);
      },
    }),
    failed: decision({
      title: "Judge the failure",
      choices: ["inspect", "decide"],
      decide: ({ input }: Ctx) => (judgesFailures(input) ? "inspect" : "decide"),
    }),
    next: decision({
      title: "Next",
      choices: ["finish", "wait", "act", "repair", "implement"],
      decide: ({ outputs }: Ctx) => {
        const { decision: chosen } = decidedOf(outputs).state;
        return chosen === "met" || chosen === "stop" ? "finish" : chosen;
      },
    }),
    pause: wait({
      title: "Wait for the next check",
      until: ({ outputs }: Ctx) => new Date(decidedOf(outputs).state.nextCheckAt ?? Date.now()),
    }),
    act: agent({
      title: "Act toward the goal",
      tools: WORK_TOOLS,
      timeoutMs: STEP_TIMEOUT_MS,
      prompt: ({ input, outputs }: Ctx) => {
        const { state, seen } = decidedOf(outputs);
        return actPrompt(goalOf(input), seen, state.check);
      },
      output: stepSchema,
    }),
    repair: agent({
      title: "Repair the failure",
      tools: WORK_TOOLS,
      timeoutMs: STEP_TIMEOUT_MS,
      prompt: ({ input, outputs }: Ctx) => {
        const { state, seen } = decidedOf(outputs);
        return repairPrompt(goalOf(input), seen, state.check);
      },
      output: stepSchema,
    }),
    brief: action({ title: "Brief autoimplement", run: brief }),
    implemented: compute({
      title: "What the repair did",
      run: ({ outputs }: Ctx): Implemented[] => [
        ...implementedOf(outputs.implemented),
        implementedEntry(outputs.implementation, decidedOf(outputs).state.check),
      ],
    }),
    finish: compute({ title: "Report", run: finish }),
    unmet: compute({ title: "Goal not met", run: unmet }),
  },
  edges: {
    observe: decisionEdge({ check: "check", inspect: "inspect" }),
    check: {
      to: ["decide", "inspect"],
      route: (out) => (out.inspect ? "inspect" : "decide"),
      onFailure: "failed",
    },
    failed: decisionEdge({ inspect: "inspect", decide: "decide" }),
    inspect: { to: "decide" },
    decide: { to: "report" },
    report: { to: "next" },
    next: decisionEdge({
      finish: "finish",
      wait: "pause",
      act: "act",
      repair: "repair",
      implement: "brief",
    }),
    pause: { to: "observe" },
    // An act or a repair is verified by checking again at once.
    act: { to: "observe" },
    repair: { to: "observe" },
    brief: { to: "implementation" },
    // Committed or blocked, the next check says whether the repair worked.
    "implementation.done": { to: "implemented" },
    "implementation.blocked": { to: "implemented" },
    implemented: { to: "observe" },
    finish: { to: ["done", "unmet"], route: (out) => (out.met ? "done" : "unmet") },
    unmet: { to: "done" },
  },
  presentationPrompt:
    "Say first whether the goal was met, then the reason, how many checks and repairs it took, and what " +
    "the last checks saw. Quote the report; add nothing of your own.",
});
