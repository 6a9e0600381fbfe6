import { INPUT_SUMMARY_MAX_CHARS, type JsonValue, oneLine } from "@piw/protocol";

/** A string as JSON on one line, cut first so a huge input costs no more than the summary. */
function quoted(text: string): string {
  return JSON.stringify(
    text.length > INPUT_SUMMARY_MAX_CHARS ? text.slice(0, INPUT_SUMMARY_MAX_CHARS) : text,
  );
}

/** A value inside the summary: scalars as JSON, strings quoted, nested objects and lists folded. */
function inner(value: JsonValue): string {
  if (typeof value === "string") return quoted(value);
  if (Array.isArray(value)) return value.length === 0 ? "[]" : "[…]";
  if (value !== null && typeof value === "object") return Object.keys(value).length === 0 ? "{}" : "{…}";
  return JSON.stringify(value);
}

/** The key as written in code: bare when it is a plain name, quoted otherwise. */
function keyText(key: string): string {
  return /^[A-Za-z_$][\w$]*$/.test(key) ? key : quoted(key);
}

function cut(text: string): string {
  return oneLine(text, INPUT_SUMMARY_MAX_CHARS);
}

/**
 * A run's input as one short line for the run list: `task: "fix the login bug"` for an object with
 * one key, `{change: "bump zod", dryRun: true}` for more, the JSON itself otherwise; never longer than
 * INPUT_SUMMARY_MAX_CHARS, with an ellipsis where it was cut.
 */
export function summarizeInput(input: JsonValue): string {
  if (input === null || typeof input !== "object" || Array.isArray(input)) {
    return cut(
      Array.isArray(input)
        ? `[${input.slice(0, 8).map(inner).join(", ")}${input.length > 8 ? ", …" : ""}]`
        : inner(input),
    );
  }
  const entries = Object.entries(input);
  if (entries.length === 0) return "{}";
  const pairs: string[] = [];
  let length = 0;
  for (const [key, value] of entries) {
    if (length > INPUT_SUMMARY_MAX_CHARS) break;
    const pair = `${keyText(key)}: ${inner(value)}`;
    pairs.push(pair);
    length += pair.length + 2;
  }
  const more = pairs.length < entries.length ? ", …" : "";
  return cut(entries.length === 1 ? (pairs[0] ?? "") : `{${pairs.join(", ")}${more}}`);
}
