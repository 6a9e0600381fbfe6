import { type core, z } from "zod";
import { type JsonValue, jsonValueSchema } from "./ids.js";
import { boundSafeMessage } from "./safe-error.js";

/** The largest JSON Schema a checkpoint may carry for the host; a bigger one is left to the worker. */
export const ANSWER_SCHEMA_MAX_BYTES = 64 * 1024;

/**
 * What the host can check of a checkpoint's answer without running workflow code, saved with the
 * waiting run. `json_schema` never refuses an answer the checkpoint's own zod schema accepts (the
 * engine only emits it when that holds); `worker_only` means the host checks nothing and the
 * continuation's worker decides.
 */
export const answerCheckSchema = z.discriminatedUnion("kind", [
  z.object({ kind: z.literal("json_schema"), schema: z.record(z.string(), jsonValueSchema) }),
  z.object({ kind: z.literal("worker_only"), reason: z.string().max(200) }),
]);
export type AnswerCheck = z.infer<typeof answerCheckSchema>;

/**
 * Who may answer a checkpoint: only a person (`human`, the default: an approval the model cannot
 * give), only the model, or either. Compiled into the manifest and saved with the waiting run.
 */
export const answeredBySchema = z.enum(["human", "model", "either"]);
export type AnsweredBy = z.infer<typeof answeredBySchema>;

/**
 * Who is answering, as the client that sends the answer knows it: the model's `workflow` tool
 * says `model`; a person's `/workflow answer`, dialog or `piw answer` says `human`.
 */
export const answererSchema = z.enum(["human", "model"]);
export type Answerer = z.infer<typeof answererSchema>;

/** Whether `answerer` may answer a checkpoint that `answeredBy` names. */
export function mayAnswer(answeredBy: AnsweredBy, answerer: Answerer): boolean {
  return answeredBy === "either" || answeredBy === answerer;
}

/** How an answer fared against the saved check. `problems` name fields and rules, never values. */
export type AnswerVerdict =
  | { kind: "accepted" }
  | { kind: "refused"; problems: string[] }
  | { kind: "unchecked"; reason: string };

const MAX_PROBLEMS = 8;
const MAX_NAME_CHARS = 40;

function nameOf(segment: PropertyKey): string {
  const text = typeof segment === "symbol" ? "?" : String(segment);
  return text.length > MAX_NAME_CHARS ? `${text.slice(0, MAX_NAME_CHARS)}…` : text;
}

/** `items[0].name`, or `(answer)` for the whole value. */
function describePath(path: readonly PropertyKey[]): string {
  let out = "";
  for (const segment of path) {
    out += typeof segment === "number" ? `[${segment}]` : `${out === "" ? "" : "."}${nameOf(segment)}`;
  }
  return out === "" ? "(answer)" : out;
}

/**
 * One issue in words that come from the schema alone. zod's own messages are schema-derived too,
 * except that they print whole patterns and unknown keys; those two are worded here.
 */
function describeIssue(issue: core.$ZodIssue): string {
  switch (issue.code) {
    case "invalid_format":
      return issue.format === "regex"
        ? "does not match the required pattern"
        : `is not a valid ${issue.format}`;
    case "unrecognized_keys":
      return `has fields the checkpoint does not take: ${issue.keys.slice(0, 3).map(nameOf).join(", ")}`;
    case "invalid_union":
      return "matches none of the allowed shapes";
    default:
      return issue.message;
  }
}

/**
 * Check an answer against a checkpoint's saved answer check. Runs no workflow code: the schema is
 * data, turned into a validator with zod's JSON Schema reader.
 */
export function checkAnswer(check: AnswerCheck, answer: JsonValue): AnswerVerdict {
  switch (check.kind) {
    case "worker_only":
      return { kind: "unchecked", reason: check.reason };
    case "json_schema": {
      let validator: z.ZodType;
      try {
        validator = z.fromJSONSchema(check.schema as core.JSONSchema.JSONSchema);
      } catch {
        return { kind: "unchecked", reason: "the saved answer schema could not be read" };
      }
      const parsed = validator.safeParse(answer);
      if (parsed.success) return { kind: "accepted" };
      const problems = parsed.error.issues
        .slice(0, MAX_PROBLEMS)
        .map((issue) => boundSafeMessage(`${describePath(issue.path)}: ${describeIssue(issue)}`, 200));
      const more = parsed.error.issues.length - problems.length;
      return { kind: "refused", problems: more > 0 ? [...problems, `and ${more} more`] : problems };
    }
    default:
      return check satisfies never;
  }
}
