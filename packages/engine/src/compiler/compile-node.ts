import { type AnsweredBy, answeredBySchema } from "@piw/protocol";
import type { ZodType } from "zod";
import type { NodeKindName, ShellReport, WorkflowNode } from "../authoring/node-specs.js";
import { answerCheckOf } from "./answer-check-of.js";
import { compileGate } from "./compile-gate.js";
import type { CompileProblem } from "./compile-error.js";
import type { CompiledNode, NodeContext, ShellCommand } from "./compiled-workflow.js";
import { type JsonSchema, jsonSchemaOf } from "./json-schema-of.js";
import { agentPlacementOf } from "./agent-placement.js";
import { compileTimeout, type TimedNodeKind } from "./deadlines.js";
import { fieldName, unknownFields } from "./known-fields.js";
import { type CompiledRetry, compileRetry } from "./retry-policy.js";
import { compileWaitDue } from "./wait-due.js";
import { compileParallel } from "./parallel-node.js";
import { compileMap } from "./map-node.js";

/** Where a node sits: what every problem about it is reported against. */
export interface NodePlace {
  path: string;
  name: string;
  scope: string;
  /** The innermost parallel branch around the node, or '' (see CompiledNode's `lane`). */
  lane: string;
}

type Fields = Record<string, unknown>;
type Check = (message: string) => void;

export function isZodSchema(value: unknown): value is ZodType {
  return (
    typeof value === "object" &&
    value !== null &&
    "_zod" in value &&
    typeof (value as { safeParse?: unknown }).safeParse === "function"
  );
}

function isFunction(value: unknown): value is (...args: never[]) => unknown {
  return typeof value === "function";
}

/** A static text becomes a constant function, so the executor always calls `prompt(ctx)`. */
function textFn(value: unknown, field: string, problem: Check): ((ctx: NodeContext) => string) | undefined {
  if (typeof value === "string") return () => value;
  if (isFunction(value)) return value as (ctx: NodeContext) => string;
  problem(`${field} must be a string or a function of the node context`);
  return undefined;
}

function optionalTextFn(value: unknown, field: string, problem: Check) {
  return value === undefined ? undefined : textFn(value, field, problem);
}

function requireFunction<F>(value: unknown, field: string, problem: Check): F | undefined {
  if (isFunction(value)) return value as F;
  problem(`${field} must be a function`);
  return undefined;
}

function optionalFunction<F>(value: unknown, field: string, problem: Check): F | undefined {
  return value === undefined ? undefined : requireFunction<F>(value, field, problem);
}

function requireSchema(value: unknown, field: string, problem: Check): ZodType | undefined {
  if (isZodSchema(value)) return value;
  problem(`${field} must be a zod schema`);
  return undefined;
}

/**
 * The JSON Schema a step contract or a checkpoint view shows; a schema JSON cannot satisfy is a
 * problem. Too large to show is a problem for a step (its contract would carry it) but not for a
 * checkpoint, whose answer is still checked: it is shown without a schema (null).
 */
function jsonSchemaFor(
  schema: ZodType | undefined,
  field: "output" | "answer",
  problem: Check,
): JsonSchema | null | undefined {
  if (schema === undefined) return undefined;
  const result = jsonSchemaOf(schema, field);
  if (result.ok) return result.schema;
  if (result.reason === "too_large" && field === "answer") return null;
  problem(result.problem);
  return undefined;
}

function answeredByOf(value: unknown, problem: Check): AnsweredBy {
  const parsed = answeredBySchema.safeParse(value ?? "human");
  if (parsed.success) return parsed.data;
  problem('answeredBy must be "human", "model" or "either"');
  return "human";
}

/** Normalizes `exec` (argv array or `{ shell }`); undefined when it is neither. */
export function shellCommandOf(exec: unknown): ShellCommand | undefined {
  if (Array.isArray(exec)) {
    if (exec.length === 0 || !exec.every((part) => typeof part === "string")) return undefined;
    return { argv: [...exec] };
  }
  if (typeof exec === "object" && exec !== null && "shell" in exec) {
    const command = (exec as { shell: unknown }).shell;
    if (typeof command === "string" && command.trim() !== "") return { shell: command };
  }
  return undefined;
}

const EXEC_HELP = 'exec must be a non-empty argv array of strings, { shell: "command" }, or a function';

function shellCommandFn(exec: unknown, problem: Check): ((ctx: NodeContext) => ShellCommand) | undefined {
  if (isFunction(exec)) {
    const build = exec as (ctx: NodeContext) => unknown;
    return (ctx) => {
      const command = shellCommandOf(build(ctx));
      if (command === undefined) throw new TypeError(`exec returned an invalid command: ${EXEC_HELP}`);
      return command;
    };
  }
  const command = shellCommandOf(exec);
  if (command === undefined) {
    problem(EXEC_HELP);
    return undefined;
  }
  return () => structuredClone(command);
}

function optionalEnv(value: unknown, problem: Check): Record<string, string> | undefined {
  if (value === undefined) return undefined;
  if (typeof value === "object" && value !== null && !Array.isArray(value)) {
    const entries = Object.entries(value);
    if (entries.every(([, v]) => typeof v === "string")) return Object.fromEntries(entries);
  }
  problem("env must be an object of string values");
  return undefined;
}

/** `okExitCodes`: a non-empty list of exit codes (0 to 255); default `[0]`. */
function exitCodesOf(value: unknown, problem: Check): readonly number[] | undefined {
  if (value === undefined) return [0];
  if (
    Array.isArray(value) &&
    value.length > 0 &&
    value.every((code) => Number.isInteger(code) && code >= 0 && code <= 255)
  ) {
    return [...new Set(value as number[])];
  }
  problem("okExitCodes must be a non-empty array of exit codes from 0 to 255");
  return undefined;
}

function choicesOf(value: unknown, problem: Check): readonly string[] | undefined {
  if (!Array.isArray(value) || value.length === 0 || !value.every((c) => typeof c === "string" && c !== "")) {
    problem("choices must be a non-empty array of non-empty strings");
    return undefined;
  }
  const seen = new Set<string>();
  for (const choice of value as string[]) {
    if (seen.has(choice)) problem(`choice "${choice}" is listed twice`);
    seen.add(choice);
  }
  return [...seen];
}

/** The fields of one node kind's spec, as written: the type keeps the list in step with the interface. */
type FieldsOf<K extends NodeKindName> = readonly (keyof Extract<WorkflowNode, { kind: K }> & string)[];

/**
 * Every option each node kind takes. A field outside its kind's list would be silently ignored, so it
 * is a compile problem instead.
 */
const NODE_FIELDS: { [K in NodeKindName]: FieldsOf<K> } = {
  agent: [
    "kind",
    "title",
    "prompt",
    "output",
    "validate",
    "timeoutMs",
    "statusDetail",
    "retry",
    "session",
    "model",
    "thinking",
    "tools",
    "systemPrompt",
    "cwd",
  ],
  compute: ["kind", "title", "run"],
  action: ["kind", "title", "run", "timeoutMs", "retry", "workspace"],
  shell: ["kind", "title", "exec", "parse", "okExitCodes", "cwd", "env", "timeoutMs", "retry"],
  notify: ["kind", "title", "message"],
  checkpoint: ["kind", "title", "prompt", "answer", "answeredBy", "gate"],
  decision: ["kind", "title", "choices", "decide"],
  wait: ["kind", "title", "ms", "until"],
  parallel: ["kind", "title", "branches", "join", "concurrency"],
  map: ["kind", "title", "over", "branch", "join", "concurrency", "maxItems"],
};

function isNodeKind(kind: unknown): kind is NodeKindName {
  return typeof kind === "string" && Object.hasOwn(NODE_FIELDS, kind);
}

/** Reports each field the node's kind does not take, naming the kinds that do take it. */
function checkNodeFields(fields: Fields, problem: Check): void {
  const kind = fields.kind;
  if (!isNodeKind(kind)) return;
  const allowed: readonly string[] = NODE_FIELDS[kind];
  for (const field of unknownFields(fields, allowed)) {
    const takers = (Object.keys(NODE_FIELDS) as NodeKindName[]).filter((k) =>
      (NODE_FIELDS[k] as readonly string[]).includes(field),
    );
    const named = takers.length > 1 ? `${takers.slice(0, -1).join(", ")} and ${takers.at(-1)}` : takers[0];
    const elsewhere = takers.length > 0 ? `; only ${named} nodes take it` : "";
    const options = allowed.filter((f) => f !== "kind").join(", ");
    problem(`${kind} nodes have no option ${fieldName(field)}${elsewhere} (${kind} takes: ${options})`);
  }
}

/**
 * Validates one authored node and builds its compiled form; reports every problem it finds and returns
 * undefined when the node cannot be built.
 */
export function compileNode(
  spec: WorkflowNode,
  place: NodePlace,
  problems: CompileProblem[],
  defaults: TimeoutDefaults = {},
): CompiledNode | undefined {
  const before = problems.length;
  const problem: Check = (message) => problems.push({ path: place.path, message });
  const fields = (typeof spec === "object" && spec !== null ? spec : {}) as Fields;
  const title = fields.title === undefined ? place.name : fields.title;
  if (typeof title !== "string") problem("title must be a string");
  const base = { ...place, title: typeof title === "string" ? title : place.name };
  checkNodeFields(fields, problem);
  const built = buildNode(fields, base, problem, defaults);
  return problems.length === before ? built : undefined;
}

/**
 * A workflow's `defaults`, checked: the deadline a node of each kind gets when it sets none, and the
 * retry policy of its agent, shell and action nodes that set none.
 */
export type TimeoutDefaults = Partial<Record<TimedNodeKind, unknown>> & { retry?: CompiledRetry };

function buildNode(
  f: Fields,
  base: NodePlace & { title: string },
  problem: Check,
  defaults: TimeoutDefaults,
): CompiledNode | undefined {
  switch (f.kind) {
    case "agent": {
      const prompt = textFn(f.prompt, "prompt", problem);
      const output = requireSchema(f.output, "output", problem);
      const validate = optionalFunction<(output: unknown, ctx: NodeContext) => string | undefined>(
        f.validate,
        "validate",
        problem,
      );
      const timeout = compileTimeout(f.timeoutMs, defaults.agent, "agent", problem);
      const statusDetail = optionalTextFn(f.statusDetail, "statusDetail", problem);
      const outputSchema = jsonSchemaFor(output, "output", problem);
      const retry = compileRetry(f.retry, defaults.retry, problem);
      const placement = agentPlacementOf(f, problem);
      if (
        prompt === undefined ||
        output === undefined ||
        !outputSchema ||
        timeout === undefined ||
        retry === undefined
      ) {
        return undefined;
      }
      return {
        kind: "agent",
        ...base,
        prompt,
        output,
        outputSchema,
        validate,
        timeout,
        statusDetail,
        retry,
        ...placement,
      };
    }
    case "compute": {
      const run = requireFunction<(ctx: never) => unknown>(f.run, "run", problem);
      return run === undefined ? undefined : { kind: "compute", ...base, run };
    }
    case "action": {
      const run = requireFunction<(ctx: never) => unknown>(f.run, "run", problem);
      const timeout = compileTimeout(f.timeoutMs, defaults.action, "action", problem);
      const retry = compileRetry(f.retry, defaults.retry, problem);
      if (run === undefined || timeout === undefined || retry === undefined) return undefined;
      return { kind: "action", ...base, run, workspace: f.workspace === true, timeout, retry };
    }
    case "shell": {
      const command = shellCommandFn(f.exec, problem);
      const parse = optionalFunction<(report: ShellReport, ctx: NodeContext) => unknown>(
        f.parse,
        "parse",
        problem,
      );
      const okExitCodes = exitCodesOf(f.okExitCodes, problem);
      if (f.cwd !== undefined && typeof f.cwd !== "string") problem("cwd must be a string");
      const env = optionalEnv(f.env, problem);
      const timeout = compileTimeout(f.timeoutMs, defaults.shell, "shell", problem);
      const retry = compileRetry(f.retry, defaults.retry, problem);
      if (command === undefined || timeout === undefined || okExitCodes === undefined || retry === undefined)
        return undefined;
      const cwd = typeof f.cwd === "string" ? f.cwd : undefined;
      return { kind: "shell", ...base, command, parse, okExitCodes, cwd, env, timeout, retry };
    }
    case "notify": {
      const message = textFn(f.message, "message", problem);
      return message === undefined ? undefined : { kind: "notify", ...base, message };
    }
    case "checkpoint": {
      const prompt = textFn(f.prompt, "prompt", problem);
      const answer = requireSchema(f.answer, "answer", problem);
      const answerSchema = jsonSchemaFor(answer, "answer", problem);
      const answeredBy = answeredByOf(f.answeredBy, problem);
      if (prompt === undefined || answer === undefined || answerSchema === undefined) return undefined;
      const answerCheck = answerCheckOf(answer);
      const gate = f.gate === undefined ? null : compileGate(f.gate, answer, problem);
      if (gate === undefined) return undefined;
      return { kind: "checkpoint", ...base, prompt, answer, answerSchema, answeredBy, answerCheck, gate };
    }
    case "decision": {
      const choices = choicesOf(f.choices, problem);
      const decide = requireFunction<(ctx: NodeContext) => string>(f.decide, "decide", problem);
      if (choices === undefined || decide === undefined) return undefined;
      return { kind: "decision", ...base, choices, decide };
    }
    case "wait": {
      const due = compileWaitDue(f.ms, f.until, problem);
      return due === undefined ? undefined : { kind: "wait", ...base, due };
    }
    case "parallel":
      return compileParallel(f, base, problem);
    case "map":
      return compileMap(f, base, problem);
    default:
      problem(
        `unknown node kind ${JSON.stringify(f.kind)}: build nodes with agent(), compute(), action(), shell(), notify(), checkpoint(), decision(), wait(), parallel() or map()`,
      );
      return undefined;
  }
}
