import { z } from "zod";

export const PROTOCOL_VERSION = 1;

/** The largest frame either side accepts; bigger frames are refused without being parsed. */
export const MAX_FRAME_BYTES = 1024 * 1024;

/** Codes of protocol-level errors in replies. Store conflicts travel as `Transition` results, not errors. */
export const protocolErrorCodeSchema = z.enum([
  "bad_frame", // not JSON, or not a request object
  "frame_too_large", // over MAX_FRAME_BYTES
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

/** Frames arriving at a client: replies to its requests and pushes it subscribed to. */
export const clientInboundSchema = z.union([replyFrameSchema, pushFrameSchema]);

export class FrameTooLarge extends Error {
  override readonly name = "FrameTooLarge";
}

/**
 * Split a byte stream into newline-delimited frames. A line over the limit is dropped whole (up to
 * its newline) and reported once, so one bad frame cannot grow memory or desynchronise the stream.
 */
export class LineSplitter {
  private buffered = "";
  private discarding = false;

  constructor(private readonly maxBytes: number = MAX_FRAME_BYTES) {}

  /** Feed a chunk; returns complete lines, and `oversized` when a line had to be dropped. */
  push(chunk: string): { lines: string[]; oversized: number } {
    const lines: string[] = [];
    let oversized = 0;
    let text = chunk;
    for (;;) {
      const newline = text.indexOf("\n");
      if (newline < 0) break;
      const part = text.slice(0, newline);
      text = text.slice(newline + 1);
      if (this.discarding) {
        this.discarding = false;
        this.buffered = "";
        continue;
      }
      const line = this.buffered + part;
      this.buffered = "";
      if (line.length > this.maxBytes) {
        oversized += 1;
        continue;
      }
      if (line.trim().length > 0) lines.push(line);
    }
    if (this.discarding) return { lines, oversized };
    this.buffered += text;
    if (this.buffered.length > this.maxBytes) {
      this.buffered = "";
      this.discarding = true;
      oversized += 1;
    }
    return { lines, oversized };
  }
}

export function encodeFrame(frame: RequestFrame | ReplyFrame | PushFrame): string {
  return `${JSON.stringify(frame)}\n`;
}
