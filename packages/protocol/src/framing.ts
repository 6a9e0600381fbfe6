import { z } from "zod";
import {
  cannotNestDeeperThan,
  inspectFrame,
  MAX_FRAME_BYTES,
  PROTOCOL_VERSION,
  utf8ByteLength,
} from "./frame-shape.js";

export { MAX_FRAME_BYTES, PROTOCOL_VERSION };

/**
 * The deepest nesting of arrays and objects a frame may have, the envelope included. Schemas and
 * `JSON.stringify` recurse per level; a bound well below the stack's keeps every parser safe.
 */
export const MAX_FRAME_DEPTH = 256;

export interface FrameLimits {
  maxBytes: number;
  maxDepth: number;
}

/** Codes of protocol-level errors in replies. Store conflicts travel as `Transition` results, not errors. */
const protocolErrorCodeSchema = z.enum([
  "bad_frame", // not JSON, or not a request object
  "frame_too_large", // over MAX_FRAME_BYTES; nothing was handled
  "frame_too_deep", // nested deeper than MAX_FRAME_DEPTH; nothing was handled
  "reply_too_large", // the request was handled, but its reply broke a frame limit and was not delivered
  "protocol_mismatch", // another protocol version, or a request before `hello`
  "unknown_method", // no such method
  "invalid_params", // params failed the method's schema
  "not_found", // an unknown run or resource ID
  "answer_invalid", // a checkpoint answer fails the checkpoint's saved schema; nothing was saved
  "refused", // the request is valid but not allowed now (agent workflow from the CLI, busy session...)
  "store_unavailable", // the state database could not be used
  "internal", // a bug in piw
]);
export type ProtocolErrorCode = z.infer<typeof protocolErrorCodeSchema>;

export const protocolErrorSchema = z.object({ code: protocolErrorCodeSchema, message: z.string().max(2048) });
export type ProtocolError = z.infer<typeof protocolErrorSchema>;

const requestId = z.union([z.string().max(100), z.number().int()]);

export const requestFrameSchema = z.object({
  v: z.literal(PROTOCOL_VERSION),
  id: requestId,
  method: z.string().min(1).max(100),
  params: z.unknown().optional(),
});
export type RequestFrame = z.infer<typeof requestFrameSchema>;

export const replyFrameSchema = z.union([
  z.object({ v: z.literal(PROTOCOL_VERSION), id: requestId, result: z.unknown() }),
  z.object({ v: z.literal(PROTOCOL_VERSION), id: requestId.nullable(), error: protocolErrorSchema }),
]);
export type ReplyFrame = z.infer<typeof replyFrameSchema>;

export const pushFrameSchema = z.object({
  v: z.literal(PROTOCOL_VERSION),
  push: z.string().min(1).max(100),
  data: z.unknown(),
});
export type PushFrame = z.infer<typeof pushFrameSchema>;

/** One piece of the stream: a complete line, or a line too long to keep, of which only its start is kept. */
export type SplitItem = { kind: "line"; line: string } | { kind: "oversized"; head: string };

/** Enough of an oversized frame to read its `id` and kind: our encoder writes them first. */
const OVERSIZED_HEAD_CHARS = 1024;

/**
 * Split a text stream into newline-delimited frames, counting UTF-8 bytes. A line over the limit is
 * dropped whole (up to its newline) and reported once, with its head, so one bad frame can neither
 * grow memory nor desynchronise the stream, and its sender can still be answered.
 */
export class LineSplitter {
  private buffered = "";
  private bufferedBytes = 0;
  private discarding = false;

  constructor(private readonly maxBytes: number = MAX_FRAME_BYTES) {}

  /** Feed a chunk; returns its complete lines and dropped lines, in stream order. */
  push(chunk: string): SplitItem[] {
    const items: SplitItem[] = [];
    let text = chunk;
    for (;;) {
      const newline = text.indexOf("\n");
      if (newline < 0) break;
      const part = text.slice(0, newline);
      text = text.slice(newline + 1);
      if (this.discarding) {
        this.discarding = false;
        continue;
      }
      const bytes = this.bufferedBytes + utf8ByteLength(part);
      const line = this.buffered + part;
      this.buffered = "";
      this.bufferedBytes = 0;
      if (bytes > this.maxBytes) items.push({ kind: "oversized", head: line.slice(0, OVERSIZED_HEAD_CHARS) });
      else if (line.trim().length > 0) items.push({ kind: "line", line });
    }
    if (this.discarding) return items;
    this.buffered += text;
    this.bufferedBytes += utf8ByteLength(text);
    if (this.bufferedBytes > this.maxBytes) {
      items.push({ kind: "oversized", head: this.buffered.slice(0, OVERSIZED_HEAD_CHARS) });
      this.buffered = "";
      this.bufferedBytes = 0;
      this.discarding = true;
    }
    return items;
  }
}

export type EncodedFrame = { ok: true; line: string } | { ok: false; error: ProtocolError };

/**
 * Encode a frame and check it against the limits the receiver will apply, so a frame that would be
 * refused there is refused here instead, where the caller can be told. Never throws.
 */
export function encodeFrameWithin(
  frame: RequestFrame | ReplyFrame | PushFrame,
  limits: FrameLimits,
): EncodedFrame {
  let text: string;
  try {
    text = JSON.stringify(frame);
  } catch {
    // A cycle, a BigInt, or nesting past the stack.
    return { ok: false, error: { code: "bad_frame", message: "The frame cannot be encoded as JSON." } };
  }
  const bytes = utf8ByteLength(text);
  if (bytes > limits.maxBytes) {
    return {
      ok: false,
      error: {
        code: "frame_too_large",
        message: `The frame is ${bytes} bytes; frames are limited to ${limits.maxBytes} bytes.`,
      },
    };
  }
  // Nesting deeper than the limit needs more opening brackets than that.
  if (!cannotNestDeeperThan(text, limits.maxDepth) && inspectFrame(text, limits.maxDepth).tooDeep) {
    return {
      ok: false,
      error: {
        code: "frame_too_deep",
        message: `The frame nests deeper than ${limits.maxDepth} levels.`,
      },
    };
  }
  return { ok: true, line: `${text}\n` };
}
