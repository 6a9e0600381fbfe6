import {
  type ActionContext,
  action,
  agent,
  compute,
  decision,
  decisionEdge,
  defineWorkflow,
  includeWorkflow,
  type NodeContext,
  notify,
  type ScopeContext,
  shell,
  WorkflowError,
  wait,
} from "piw";
import { z } from "zod";
import autoimplement from "./autoimplement.js";
import {
  commandFailure,
  decideNext,
  type Ending,
  type Limits,
  type MonitorState,
  monitorStateSchema,
  type Observation,
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
import {
  actPrompt,
  checkReport,
  type Goal,
  INSPECTOR_SYSTEM_PROMPT,
  implementTask,
  inspectPrompt,
  repairPrompt,
} from "./monitor-prompts.js";

const MINUTE_MS = 60_000;
const INSPECT_TIMEOUT_MS = 10 * MINUTE_MS;
const STEP_TIMEOUT_MS = 30 * MINUTE_MS;
/** What act and repair may use when they run isolated (a run started from a shell); Pi's own names. */
const WORK_TOOLS = ["read", "bash", "edit", "write", "grep", "find", "ls"];

const inputSchema = z.object({
  /** The goal in the requester's words: the free words of `piw run monitor <words>`. */
  task: z
    .string()
    .max(8000)
    .refine((text) => text.trim() !== "", "describe the goal to monitor"),
  /** A shell command: exit 0 means met, 1 not yet, anything else failing. */
  check: z.string().min(1).max(4000).optional(),
  /** Minutes between checks; a fraction is allowed (0.05 is 3 seconds). */
  everyMinutes: z.number().min(0.01).max(1440).default(10),
  maxChecks: z.number().int().min(1).max(1000).default(100),
  /** A condition in words that ends the loop early; the read-only inspector judges it. */
  stopWhen: z.string().min(1).max(2000).optional(),
  /** The latest time to check, with its offset (`2026-12-04T18:00:00Z`). */
  deadline: z.iso.datetime({ offset: true }).optional(),
  /**
   * What the monitor may do besides watching: the goal's authority, enforced on every decision.
   * `implement` (repairing a code defect through autoimplement) is granted only when named.
   */
  allow: z
    .array(z.enum(["act", "repair", "implement"]))
    .max(3)
    .default(["act", "repair"]),
  /** An implement repair publishes its branch as a pull request (autoimplement's `publish`). */
  publish: z.boolean().default(false),
  /** With `publish`: an implement repair merges its pull request once its checks pass. */
  merge: z.boolean().default(false),
  /** What act and repair must never do, in words; every step is told. */
  limits: z.string().min(1).max(2000).optional(),
  checkTimeoutMinutes: z.number().min(0.1).max(240).default(10),
});
type Input = z.output<typeof inputSchema>;
type Ctx = NodeContext<Input>;

const checkSchema = z.object({ met: z.boolean(), output: z.string(), inspect: z.boolean() });

const inspectionSchema = z.object({
  goal: z.enum(["met", "pending", "failing"]),
  summary: z.string().min(1).max(600),
  evidence: z.array(z.string().min(1).max(400)).max(10),
  /** A few stable words naming what fails; null unless goal is failing. */
  failure: z.string().min(1).max(200).nullable(),
  stopWhenHolds: z.boolean(),
  next: z.enum(["wait", "act", "repair", "implement"]),
  /** The one step for act or repair, or what implement's fix must achieve; null for wait. */
  action: z.string().min(1).max(2000).nullable(),
});
type Inspection = z.infer<typeof inspectionSchema>;

const stepSchema = z.object({
  summary: z.string().min(1).max(1200),
  changed: z.array(z.string().min(1).max(500)).max(50),
});

const decidedSchema = z.object({ state: monitorStateSchema, seen: observationSchema });
type Decided = z.infer<typeof decidedSchema>;

const goalOf = (input: Input): Goal => ({
  task: input.task.trim(),
  stopWhen: input.stopWhen ?? null,
  limits: input.limits ?? null,
  allowAct: input.allow.includes("act"),
  allowRepair: input.allow.includes("repair"),
  allowImplement: input.allow.includes("implement"),
});

const limitsOf = (input: Input): Limits => ({
  everyMs: Math.round(input.everyMinutes * MINUTE_MS),
  maxChecks: input.maxChecks,
  deadline: input.deadline === undefined ? null : Date.parse(input.deadline),
  allowAct: input.allow.includes("act"),
  allowRepair: input.allow.includes("repair"),
  allowImplement: input.allow.includes("implement"),
});

const previousOf = (outputs: Record<string, unknown>): MonitorState | null =>
  outputs.decide === undefined ? null : parsed(decidedSchema, outputs.decide).state;

const decidedOf = (outputs: Record<string, unknown>): Decided => parsed(decidedSchema, outputs.decide);

/** The authority the input grants is enforced here: a proposal beyond it is refused, and the model answers again. */
function checkInspection(out: Inspection, { input }: Ctx): string | undefined {
  if (out.goal === "failing" && out.failure === null) return "a failing goal names its failure in failure";
  if (out.goal !== "failing" && out.failure !== null) return "failure is null unless the goal is failing";
  if (out.stopWhenHolds && input.stopWhen === undefined)
    return "there is no stop condition: stopWhenHolds is false";
  if (out.next !== "wait" && !input.allow.includes(out.next)) {
    return `this monitor may not ${out.next} (its input allows: ${input.allow.join(", ") || "only watching"}); propose wait`;
  }
  if (out.next === "implement" && out.goal !== "failing")
    return "implement repairs a failing goal only; propose another step";
  if (out.next !== "wait" && out.action === null) return `name the one step to ${out.next} in action`;
  return undefined;
}

/** A failing check goes to the inspector when implement is allowed: it tells a code defect from the rest. */
const judgesFailures = (input: Input): boolean => input.allow.includes("implement");

/** What the latest check printed: its routed failure's output (a failure stays until it passes), else its result. */
function checkOutputOf({ input, outputs, failures }: Ctx): string | null {
  if (input.check === undefined) return null;
  const failed = failures.check;
  if (failed === undefined) return parsed(checkSchema, outputs.check).output;
  return failed.shell === undefined ? failed.message : outputTail(failed.shell.stdout, failed.shell.stderr);
}

/** This round's observation: the check command's result, and the inspector's when it ran this round. */
function observationOf(ctx: Ctx): Observation {
  const { input, outputs, failures } = ctx;
  const failed = failures.check;
  if (input.check !== undefined && failed !== undefined) {
    const shell = failed.shell;
    const failure =
      failed.status === "timed_out"
        ? "the check timed out"
        : commandFailure(shell?.exitCode ?? null, shell?.stdout ?? "", shell?.stderr ?? "");
    const output = checkOutputOf(ctx);
    if (judgesFailures(input)) {
      // The command names the failure (stable across checks); the inspector proposes the repair.
      const seen = parsed(inspectionSchema, outputs.inspect);
      return {
        source: "inspector",
        goal: "failing",
        summary: seen.summary,
        failure,
        stop: seen.stopWhenHolds ? seen.summary : null,
        next: seen.next,
        action: seen.action,
        output,
      };
    }
    return {
      source: "check",
      goal: "failing",
      summary: failure,
      failure,
      stop: null,
      next: null,
      action: null,
      output,
    };
  }
  const checked = input.check === undefined ? null : parsed(checkSchema, outputs.check);
  if (checked !== null && !checked.inspect) {
    const last =
      checked.output
        .split("\n")
        .filter((line) => line.trim() !== "")
        .at(-1) ?? "";
    return {
      source: "check",
      goal: checked.met ? "met" : "pending",
      summary: last.slice(0, 600),
      failure: null,
      stop: null,
      next: null,
      action: null,
      output: null,
    };
  }
  const seen = parsed(inspectionSchema, outputs.inspect);
  return {
    source: "inspector",
    // The check command's exit code is the authority on the goal; the inspector judges the rest.
    goal:
      checked === null ? seen.goal : checked.met ? "met" : seen.goal === "failing" ? "failing" : "pending",
    summary: seen.summary,
    failure: seen.failure,
    stop: seen.stopWhenHolds ? seen.summary : null,
    next: seen.next,
    action: seen.action,
    output: checked?.output ?? null,
  };
}

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
