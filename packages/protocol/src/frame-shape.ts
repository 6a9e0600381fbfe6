export const PROTOCOL_VERSION = 1;

/** The largest frame either side accepts, in UTF-8 bytes; bigger frames are refused without being parsed. */
export const MAX_FRAME_BYTES = 1024 * 1024;

/** What a frame claims to be, read from its top-level members without parsing it. */
type FrameKind = "request" | "reply" | "push" | "unknown";

export interface FrameShape {
  /** The top-level `id`, when it is a short string or an integer. */
  id: string | number | null;
  kind: FrameKind;
  /** The text nests arrays and objects deeper than the limit: it must not be parsed. */
  tooDeep: boolean;
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const COMMA = 0x2c;
/** Longer `id` strings fail the request schema anyway; an error reply does not need them. */
const MAX_ID_TEXT = 200;

/** The index of the quote that closes the string opened at `open`, or -1 if the text ends first. */
function stringEnd(text: string, open: number): number {
  let at = open + 1;
  for (;;) {
    const quote = text.indexOf('"', at);
    if (quote < 0) return -1;
    let slashes = 0;
    while (text.charCodeAt(quote - 1 - slashes) === BACKSLASH) slashes += 1;
    if (slashes % 2 === 0) return quote;
    at = quote + 1;
  }
}

function isNumberChar(c: number): boolean {
  return (c >= 0x30 && c <= 0x39) || c === 0x2d || c === 0x2b || c === 0x2e || c === 0x65 || c === 0x45;
}

function readStringId(literal: string): string | null {
  if (literal.length > MAX_ID_TEXT) return null;
  try {
    const value: unknown = JSON.parse(literal);
    return typeof value === "string" ? value : null;
  } catch {
    return null;
  }
}

/**
 * One iterative pass over a frame's text (whole, or only the head of an oversized one): how deep it
 * nests, and its top-level `id` and kind, so a frame that is refused unparsed can still be answered
 * for its id. Never recurses, so no nesting can overflow the stack here.
 */
export function inspectFrame(text: string, maxDepth = Number.POSITIVE_INFINITY): FrameShape {
  let depth = 0;
  let topIsObject = false;
  let expectKey = false;
  let member: string | null = null;
  let id: string | number | null = null;
  const keys = new Set<string>();
  const shape = (tooDeep: boolean): FrameShape => ({
    id,
    kind: keys.has("method")
      ? "request"
      : keys.has("result") || keys.has("error")
        ? "reply"
        : keys.has("push")
          ? "push"
          : "unknown",
    tooDeep,
  });
  for (let i = 0; i < text.length; i += 1) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      const end = stringEnd(text, i);
      if (end < 0) break;
      if (depth === 1 && topIsObject) {
        if (expectKey) {
          member = text.slice(i + 1, end);
          keys.add(member);
          expectKey = false;
        } else {
          if (member === "id") id = readStringId(text.slice(i, end + 1));
          member = null;
        }
      }
      i = end;
      continue;
    }
    if (c === OPEN_BRACE || c === OPEN_BRACKET) {
      depth += 1;
      if (depth > maxDepth) return shape(true);
      if (depth === 1) {
        topIsObject = c === OPEN_BRACE;
        expectKey = topIsObject;
      } else if (depth === 2) {
        member = null;
      }
      continue;
    }
    if (c === CLOSE_BRACE || c === CLOSE_BRACKET) {
      depth -= 1;
      continue;
    }
    if (depth !== 1 || !topIsObject) continue;
    if (c === COMMA) {
      expectKey = true;
      member = null;
    } else if (member === "id" && isNumberChar(c)) {
      let end = i;
      while (end < text.length && isNumberChar(text.charCodeAt(end))) end += 1;
      const value = Number(text.slice(i, end));
      id = Number.isSafeInteger(value) ? value : null;
      member = null;
      i = end - 1;
    }
  }
  return shape(false);
}

/**
 * True when `text` holds at most `maxDepth` opening brackets, found with the engine's own string
 * search: such a text cannot nest deeper than `maxDepth`, so the character-by-character scan of
 * `inspectFrame` is needed only for the rare frame with more brackets than the limit.
 */
export function cannotNestDeeperThan(text: string, maxDepth: number): boolean {
  let brackets = 0;
  for (const open of ["{", "["]) {
    for (let at = text.indexOf(open); at >= 0; at = text.indexOf(open, at + 1)) {
      brackets += 1;
      if (brackets > maxDepth) return false;
    }
  }
  return true;
}

/** Any UTF-16 code unit outside ASCII (surrogates included: no `u` flag). */
const NON_ASCII = /[\u0080-\uffff]/;

/**
 * UTF-8 bytes of a string, without encoding it. Frame limits count bytes: a frame of two-byte
 * characters is twice its `length`.
 */
export function utf8ByteLength(text: string): number {
  // Most frames are ASCII: one byte a character, found by the regex engine rather than this loop.
  if (!NON_ASCII.test(text)) return text.length;
  let bytes = 0;
  for (let i = 0; i < text.length; i += 1) {
    const c = text.charCodeAt(i);
    if (c < 0x80) bytes += 1;
    else if (c < 0x800) bytes += 2;
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < text.length) {
      const next = text.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) {
        bytes += 4;
        i += 1;
      } else bytes += 3;
    } else bytes += 3; // Other BMP characters, and a lone surrogate (encoded as U+FFFD).
  }
  return bytes;
}
