import {
  PREFLIGHT_MAX_PROBLEMS,
  PREFLIGHT_MAX_SOURCES,
  PREFLIGHT_MAX_TEXT,
  type PreflightLaunch,
  type PreflightRefusal,
  type PreflightReply,
  type PreflightRequest,
  type PreflightSource,
  preflightReplySchema,
  preflightRequestSchema,
  type WorkflowDescription,
} from "@piw/protocol";
import { inputKeysOf } from "../launch/input-keys.js";
import { listBuiltinWorkflowNames } from "../loader/builtin-registry.js";
import type { LoadedWorkflow } from "../loader/load-workflow-file.js";
import { isWorkflowPath, loadBuiltinWorkflow } from "../loader/resolve-workflow.js";
import { LaunchRefused } from "../launch/launch-refused.js";
import {
  agentStepPaths,
  loadForLaunch,
  prepareInput,
  refuseAgentStepsWithoutPi,
  reserveRequest,
} from "../launch/prepare-launch.js";
import { DEFAULT_PREFLIGHT_TIMEOUT_MS } from "./evaluate-preflight.js";
import { isolatedStepModels, type ModelCheck, type ModelCheckResult } from "./model-check.js";

export interface ServePreflightOptions {
  /** Whether the launch's isolated agent steps have a usable model; unchecked without it. */
  checkModels?: ModelCheck;
}

/** What the child does with one request; a refusal is a reply, anything else thrown is a bug. */
function answer(request: PreflightRequest, options: ServePreflightOptions): Promise<PreflightReply> {
  switch (request.type) {
    case "launch":
      return answerLaunch(request, options);
    case "describe":
      return answerDescribe(request);
    case "builtins":
      return Promise.resolve(answerBuiltins(request));
    default:
      return request satisfies never;
  }
}

async function answerDescribe(
  request: Extract<PreflightRequest, { type: "describe" }>,
): Promise<PreflightReply> {
  const { requestId } = request;
  try {
    const loaded = await loadForLaunch(request.ref, request.cwd);
    return { type: "described", requestId, workflow: describeLoaded(loaded) };
  } catch (error) {
    if (!(error instanceof LaunchRefused)) throw error;
    return { type: "refused", requestId, refusal: boundedRefusal(error) };
  }
}

function describeLoaded(loaded: LoadedWorkflow): WorkflowDescription {
  const { workflow } = loaded;
  const schema = workflow.inputSchema;
  return {
    name: loaded.name,
    title: workflow.title === undefined ? null : clip(workflow.title),
    input: schema === undefined ? null : (inputKeysOf(schema) ?? null),
    takesInput: schema !== undefined,
    summary: workflow.summary === undefined ? null : clip(workflow.summary),
    textInput: schema === undefined ? null : workflow.textInput,
    agentSteps: agentStepPaths(loaded),
  };
}

/** The built-ins registered in this child, described; one that does not compile is left out. */
function answerBuiltins(request: Extract<PreflightRequest, { type: "builtins" }>): PreflightReply {
  const workflows = listBuiltinWorkflowNames().flatMap((name) => {
    try {
      return [describeLoaded(loadBuiltinWorkflow(name))];
    } catch {
      return [];
    }
  });
  return { type: "builtins.described", requestId: request.requestId, workflows };
}

/** What the model check leaves of the asker's time limit, for the reply and the exit. */
const MODEL_CHECK_MARGIN_MS = 1_500;

/**
 * Refuse a launch whose isolated agent steps have no model to use: it would only fail later. A check
 * that would outlast the asker's time limit (Pi's SDK loading slowly) is skipped rather than blamed
 * on the workflow as a load timeout; the worker checks again when the step opens its session.
 */
async function refuseWithoutModel(
  loaded: LoadedWorkflow,
  request: Extract<PreflightRequest, { type: "launch" }>,
  check: ModelCheck | undefined,
): Promise<void> {
  const steps = isolatedStepModels(loaded, request.piSession);
  if (check === undefined || steps.length === 0) return;
  // The asker's clock started about when this process did.
  const spent = Date.now() - performance.timeOrigin;
  const left = (request.timeoutMs ?? DEFAULT_PREFLIGHT_TIMEOUT_MS) - spent - MODEL_CHECK_MARGIN_MS;
  if (left <= 0) return;
  let timer: NodeJS.Timeout | undefined;
  const skipped = new Promise<ModelCheckResult>((resolve) => {
    timer = setTimeout(() => resolve({ kind: "skipped" }), left);
  });
  const result = await Promise.race([
    check({ steps, cwd: request.cwd, piSdkEntry: request.piSdkEntry }),
    skipped,
  ]).finally(() => clearTimeout(timer));
  if (result.kind === "unavailable")
    throw new LaunchRefused("model_unavailable", result.message, result.problems);
}

async function answerLaunch(
  request: Extract<PreflightRequest, { type: "launch" }>,
  options: ServePreflightOptions,
): Promise<PreflightReply> {
  const { requestId } = request;
  try {
    const loaded = await loadForLaunch(request.ref, request.cwd);
    if (!request.piSession) refuseAgentStepsWithoutPi(loaded);
    const prepared = await prepareInput(loaded, request);
    await refuseWithoutModel(loaded, request, options.checkModels);
    // What the workflow decides; the caller adds its own origin and working directory.
    const {
      origin: _origin,
      workingDir: _workingDir,
      ...reserve
    } = reserveRequest(prepared, {
      origin: { kind: "cli" },
      workingDir: request.cwd,
    });
    const launch: PreflightLaunch = {
      ...reserve,
      ...(loaded.workflow.title === undefined ? {} : { title: loaded.workflow.title }),
      notifyModel: loaded.workflow.notifyModel,
      notes: prepared.notes,
      agentSteps: agentStepPaths(loaded),
    };
    const sources = reusableSources(loaded, request, options);
    return { type: "launch.prepared", requestId, launch, ...(sources === undefined ? {} : { sources }) };
  } catch (error) {
    if (!(error instanceof LaunchRefused)) throw error;
    return { type: "refused", requestId, refusal: boundedRefusal(error) };
  }
}

/**
 * The files a launch depends on, when its reply may be reused while they are unchanged: a file named by
 * path (a name may resolve elsewhere once a file appears) whose every module was hashed, and no model
 * check (it depends on Pi's settings, not on files).
 */
function reusableSources(
  loaded: LoadedWorkflow,
  request: Extract<PreflightRequest, { type: "launch" }>,
  options: ServePreflightOptions,
): PreflightSource[] | undefined {
  if (!isWorkflowPath(request.ref) || request.ref.startsWith("~")) return undefined;
  const modules = loaded.modules;
  if (loaded.source.kind !== "file" || modules === undefined || !modules.complete) return undefined;
  if (modules.files.length > PREFLIGHT_MAX_SOURCES) return undefined;
  if (options.checkModels !== undefined && isolatedStepModels(loaded, request.piSession).length > 0)
    return undefined;
  return modules.files;
}

const clip = (text: string) =>
  text.length <= PREFLIGHT_MAX_TEXT ? text : `${text.slice(0, PREFLIGHT_MAX_TEXT - 1)}…`;

/** A refusal that fits the protocol's bounds: a huge broken workflow still gets its first problems. */
function boundedRefusal(error: LaunchRefused): PreflightRefusal {
  const problems = error.problems.map(clip);
  if (problems.length > PREFLIGHT_MAX_PROBLEMS) {
    const more = problems.length - (PREFLIGHT_MAX_PROBLEMS - 1);
    problems.splice(PREFLIGHT_MAX_PROBLEMS - 1, problems.length, `… and ${more} more`);
  }
  return { code: error.code, message: clip(error.message), problems, usage: error.usage };
}

/**
 * Check the reply before sending it: a launch the protocol cannot carry (say an oversized
 * presentation prompt) is the workflow's problem, refused as such rather than as a broken reply.
 */
function checkedReply(reply: PreflightReply): PreflightReply {
  const checked = preflightReplySchema.safeParse(reply);
  if (checked.success) return reply;
  const problems = checked.error.issues
    .slice(0, PREFLIGHT_MAX_PROBLEMS)
    .map((issue) => clip(`${issue.path.join(".")}: ${issue.message}`));
  return {
    type: "refused",
    requestId: reply.requestId,
    refusal: {
      code: "workflow_invalid",
      message: "the workflow cannot be launched:",
      problems,
      usage: false,
    },
  };
}

/** Send the one reply, then end: nothing the workflow left running (timers, sockets) may keep us. */
function replyAndExit(reply: PreflightReply): void {
  if (process.send === undefined) process.exit(70);
  process.send(checkedReply(reply), (error: Error | null) => process.exit(error ? 70 : 0));
}

/**
 * The preflight child's whole life (the `dist/preflight.js` entry of the worker app): wait for one
 * request on the IPC channel, load the workflow, reply, exit. Started only by `evaluatePreflight`,
 * which bounds it in time and kills its process group; what the workflow prints is discarded there.
 */
export function servePreflight(options: ServePreflightOptions = {}): void {
  if (process.send === undefined) {
    process.stderr.write("piw preflight: start me with an IPC channel (see evaluatePreflight)\n");
    process.exit(64);
  }
  let requestId: string | undefined;
  // A throw from a timer or a stray rejection of the workflow's code: the load cannot be trusted.
  const crashed = () => {
    if (requestId === undefined) process.exit(70);
    replyAndExit({ type: "crashed", requestId });
  };
  process.on("uncaughtException", crashed);
  process.on("unhandledRejection", crashed);
  process.once("message", (raw: unknown) => {
    const parsed = preflightRequestSchema.safeParse(raw);
    // The parent speaks this protocol or nothing: a bad request has no requestId to answer to.
    if (!parsed.success) process.exit(65);
    requestId = parsed.data.requestId;
    void answer(parsed.data, options).then(replyAndExit, () =>
      replyAndExit({
        type: "refused",
        requestId: parsed.data.requestId,
        refusal: {
          code: "internal_error",
          message: "piw preflight failed (a bug in piw)",
          problems: [],
          usage: false,
        },
      }),
    );
  });
}
