import type { ExtensionContext } from "@earendil-works/pi-coding-agent";
import type { CheckpointView, JsonValue, RunView } from "@piw/protocol";
import { answerExample } from "@piw/viewer";
import { asWorkflowError } from "./host-link.js";

type Ui = ExtensionContext["ui"];
type Schema = Record<string, unknown>;

/** How a dialog asks for an answer, chosen from the answer's JSON Schema. */
export type GateQuestion =
  | { kind: "choice"; options: string[]; answerOf(choice: string): JsonValue }
  | {
      /** One of several objects told apart by one constant field (an approval gate's choices). */
      kind: "choice-note";
      field: string;
      options: string[];
      /** The options whose answer must carry a note; the others may skip it. */
      noteRequired: string[];
    }
  | { kind: "json"; placeholder: string };

/** Yes/No options: a dismissed select gives no answer, where a dismissed confirm would say no. */
const YES = "Yes";
const NO = "No";

function isSchema(value: unknown): value is Schema {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** The choices of a boolean or a string enum, or undefined for anything else. */
function choicesOf(node: unknown): { options: string[]; valueOf(choice: string): JsonValue } | undefined {
  if (!isSchema(node)) return undefined;
  if (node.type === "boolean") return { options: [YES, NO], valueOf: (choice) => choice === YES };
  const values = node.enum;
  if (Array.isArray(values) && values.length > 0 && values.every((v) => typeof v === "string")) {
    return { options: values as string[], valueOf: (choice) => choice };
  }
  return undefined;
}

/**
 * A `oneOf` of objects that each fix one field to a constant and have no other field than an optional
 * or required string `note`: the typed choices of an approval gate (`{"choice":"revise","note":"…"}`).
 */
function noteChoicesOf(schema: Schema): Extract<GateQuestion, { kind: "choice-note" }> | undefined {
  const variants = schema.oneOf ?? schema.anyOf;
  if (!Array.isArray(variants) || variants.length === 0) return undefined;
  let field: string | undefined;
  const options: string[] = [];
  const noteRequired: string[] = [];
  for (const variant of variants) {
    if (!isSchema(variant) || variant.type !== "object" || !isSchema(variant.properties)) return undefined;
    const names = Object.keys(variant.properties);
    const key = names.find((name) => name !== "note");
    const constant = key === undefined ? undefined : (variant.properties[key] as Schema | undefined)?.const;
    if (key === undefined || typeof constant !== "string" || names.length > 2) return undefined;
    if (field !== undefined && key !== field) return undefined;
    field = key;
    options.push(constant);
    const required = Array.isArray(variant.required) ? variant.required : [];
    if (required.includes("note")) noteRequired.push(constant);
  }
  return field === undefined ? undefined : { kind: "choice-note", field, options, noteRequired };
}

/**
 * A boolean or an enum, alone or as the one required field of an object whose other fields are
 * optional, is a choice (`{"approved": true}` from "Yes"); so is a gate's list of typed choices, which
 * asks for a note after the choice; anything else is typed as JSON.
 */
export function gateQuestion(schema: CheckpointView["answerSchema"]): GateQuestion {
  const example = answerExample(schema);
  const json: GateQuestion = {
    kind: "json",
    placeholder: example === undefined ? "" : JSON.stringify(example),
  };
  if (!schema) return json;
  const noted = noteChoicesOf(schema);
  if (noted) return noted;
  const root = choicesOf(schema);
  if (root) return { kind: "choice", options: root.options, answerOf: root.valueOf };
  const required = Array.isArray(schema.required) ? schema.required : [];
  const [field] = required;
  if (schema.type !== "object" || required.length !== 1 || typeof field !== "string") return json;
  const properties = isSchema(schema.properties) ? schema.properties : {};
  const inner = choicesOf(properties[field]);
  if (!inner) return json;
  return {
    kind: "choice",
    options: inner.options,
    answerOf: (choice) => ({ [field]: inner.valueOf(choice) }),
  };
}

/** Sends a person's answer; returns the text to show, or throws a WorkflowError-like refusal. */
export type AnswerAsHuman = (runId: string, answer: JsonValue) => Promise<string>;

/**
 * In a session with a UI, a run of this session that reaches a checkpoint a person may answer
 * opens a Pi dialog with the checkpoint's prompt. Its answer goes through the same path as
 * `/workflow answer`; a dismissed dialog answers nothing (`/workflow answer` still can). Each
 * checkpoint visit asks once per Pi process, and its dialog closes when the checkpoint is
 * answered elsewhere.
 */
export class GateDialogs {
  private readonly asked = new Set<string>();
  private readonly open = new Map<string, AbortController>();

  constructor(private readonly answerAsHuman: AnswerAsHuman) {}

  onView(view: RunView, ctx: ExtensionContext): void {
    // A continuation exists: its checkpoint was answered (here, from the CLI or by the model).
    if (view.originCommand === "continue" && view.parentRunId !== null) {
      this.open.get(view.parentRunId)?.abort();
    }
    const checkpoint = view.checkpoint;
    if (!ctx.hasUI || view.outcome !== "waiting" || !checkpoint || checkpoint.answeredBy === "model") return;
    const key = `${view.runId}\u0000${checkpoint.path}\u0000${checkpoint.visit}`;
    if (this.asked.has(key)) return;
    this.asked.add(key);
    const controller = new AbortController();
    this.open.set(view.runId, controller);
    void this.ask(view.runId, checkpoint, ctx.ui, controller.signal).finally(() => {
      if (this.open.get(view.runId) === controller) this.open.delete(view.runId);
    });
  }

  /** Asks until an answer is saved, the dialog is dismissed, or the checkpoint is answered elsewhere. */
  private async ask(runId: string, checkpoint: CheckpointView, ui: Ui, signal: AbortSignal): Promise<void> {
    const question = gateQuestion(checkpoint.answerSchema);
    const title = `Workflow checkpoint ${checkpoint.path}: ${checkpoint.prompt}`;
    const later = `Answer it later with /workflow answer ${runId} <json>.`;
    for (;;) {
      const answer = await this.answerFrom(question, title, ui, signal);
      if (signal.aborted) return;
      if (answer.kind === "dismissed") {
        ui.notify(`No answer given to checkpoint ${checkpoint.path}. ${later}`, "info");
        return;
      }
      if (answer.kind === "unreadable") {
        const what = question.kind === "json" ? "That answer is not JSON" : "That answer is incomplete";
        ui.notify(`${what}: ${answer.why}. Try again.`, "error");
        continue;
      }
      try {
        ui.notify(await this.answerAsHuman(runId, answer.value), "info");
        return;
      } catch (error) {
        const refused = asWorkflowError(error);
        ui.notify(refused.message, "error");
        // Only a wrong answer is worth asking again; anything else would refuse again.
        if (refused.code !== "answer_invalid") return;
      }
    }
  }

  private async answerFrom(
    question: GateQuestion,
    title: string,
    ui: Ui,
    signal: AbortSignal,
  ): Promise<
    { kind: "answer"; value: JsonValue } | { kind: "dismissed" } | { kind: "unreadable"; why: string }
  > {
    if (question.kind === "choice") {
      const choice = await ui.select(title, question.options, { signal });
      return choice === undefined
        ? { kind: "dismissed" }
        : { kind: "answer", value: question.answerOf(choice) };
    }
    if (question.kind === "choice-note") {
      const choice = await ui.select(title, question.options, { signal });
      if (choice === undefined) return { kind: "dismissed" };
      const required = question.noteRequired.includes(choice);
      const hint = required ? "a note (required)" : "a note (optional: leave empty for none)";
      const note = await ui.input(`${choice}: ${hint}`, "", { signal });
      if (note === undefined && required) return { kind: "dismissed" };
      const text = note?.trim() ?? "";
      if (text === "" && required) return { kind: "unreadable", why: `${choice} needs a note` };
      return { kind: "answer", value: { [question.field]: choice, ...(text === "" ? {} : { note: text }) } };
    }
    const typed = await ui.input(title, question.placeholder, { signal });
    if (typed === undefined || typed.trim() === "") return { kind: "dismissed" };
    try {
      return { kind: "answer", value: JSON.parse(typed) as JsonValue };
    } catch (error) {
      return { kind: "unreadable", why: error instanceof Error ? error.message.slice(0, 120) : "unreadable" };
    }
  }
}
