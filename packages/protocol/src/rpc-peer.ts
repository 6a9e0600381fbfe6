import type { z } from "zod";
import { cannotNestDeeperThan, type FrameShape, inspectFrame } from "./frame-shape.js";
import {
  encodeFrameWithin,
  type FrameLimits,
  LineSplitter,
  MAX_FRAME_BYTES,
  MAX_FRAME_DEPTH,
  PROTOCOL_VERSION,
  type ProtocolError,
  type ProtocolErrorCode,
  protocolErrorSchema,
  pushFrameSchema,
  type ReplyFrame,
  replyFrameSchema,
  type RequestFrame,
  requestFrameSchema,
} from "./framing.js";
import type { NoPushes, PushArgs, PushTable } from "./push-table.js";

/** A failed call as the caller sees it: the peer's typed error, never a stack. */
export class RpcError extends Error {
  override readonly name = "RpcError";
  constructor(
    readonly code: ProtocolErrorCode,
    message: string,
  ) {
    super(message);
  }
}

/**
 * One side's methods: params arrive already parsed by the method's schema. A method may also carry
 * `quickResult` and `quickParams`, checks without zod that are narrower than the result or params
 * schema and accept only values the schema parses unchanged: a reply or params that pass are taken as
 * they are (the quick path of the caller or of the handling side).
 */
export type MethodTable = Record<
  string,
  {
    params: z.ZodType;
    result: z.ZodType;
    quickResult?: (value: unknown) => boolean;
    quickParams?: (value: unknown) => boolean;
  }
>;
/** The handler of one method: its params already parsed, its result checked by the caller's schema. */
type Handler<T extends MethodTable, M extends keyof T> = (
  params: z.infer<T[M]["params"]>,
) => Promise<z.input<T[M]["result"]>> | z.input<T[M]["result"]>;
/** Every method of the table has its handler: a forgotten one is a compile error, not `unknown_method`. */
export type Handlers<T extends MethodTable> = { [M in keyof T]: Handler<T, M> };

export interface RpcPeerOptions<Local extends MethodTable, Remote extends MethodTable> {
  /** Writes one encoded frame (a line). */
  send(line: string): void;
  /** Methods this side serves, and their schemas. */
  local?: { methods: Local; handlers: Handlers<Local> };
  /** Methods the other side serves: results are parsed with these schemas. */
  remote?: Remote;
  /** Push frames from the other side. */
  onPush?(push: string, data: unknown): void;
  /** A frame this side refused (malformed, oversized, too deep); the reply has already been sent. */
  onRefused?(error: ProtocolError): void;
  maxFrameBytes?: number;
  maxFrameDepth?: number;
}

/** Whether a push left: one that breaks a frame limit is refused here rather than dropped there. */
export type PushOutcome = { ok: true } | { ok: false; error: ProtocolError };

/** The one normalizer at the RPC boundary: a handler's throw becomes a typed, bounded error. */
function toProtocolError(error: unknown): ProtocolError {
  if (error instanceof RpcError) return { code: error.code, message: error.message.slice(0, 2048) };
  return { code: "internal", message: "The host failed to handle the request; see the host log." };
}

/**
 * Both ends of newline-delimited JSON RPC, transport-agnostic: the host's client sockets, the
 * client, and the worker's stdio all use it. Every inbound frame is parsed with the protocol's
 * schema; nothing a peer sends can throw out of `feed`.
 */
export class RpcPeer<
  Local extends MethodTable = MethodTable,
  Remote extends MethodTable = MethodTable,
  /** The pushes this side sends (see `PushTable`); none unless given. */
  Sends extends PushTable = NoPushes,
> {
  private readonly splitter: LineSplitter;
  private readonly limits: FrameLimits;
  private readonly pending = new Map<
    string | number,
    { resolve(v: unknown): void; reject(e: Error): void; method: string }
  >();
  private nextId = 1;
  private closed = false;

  constructor(private readonly options: RpcPeerOptions<Local, Remote>) {
    this.limits = {
      maxBytes: options.maxFrameBytes ?? MAX_FRAME_BYTES,
      maxDepth: options.maxFrameDepth ?? MAX_FRAME_DEPTH,
    };
    this.splitter = new LineSplitter(this.limits.maxBytes);
  }

  /** Feed raw text from the transport. Never throws: each frame's failure stays with that frame. */
  feed(chunk: string): void {
    for (const item of this.splitter.push(chunk)) {
      if (item.kind === "oversized") {
        this.refuseFrame(
          inspectFrame(item.head),
          "frame_too_large",
          `A frame exceeded ${this.limits.maxBytes} bytes.`,
        );
      } else {
        this.receive(item.line);
      }
    }
  }

  /** Call a method on the other side; resolves with its parsed result or rejects with an RpcError. */
  call<M extends keyof Remote & string>(
    method: M,
    params?: z.input<Remote[M]["params"]>,
  ): Promise<z.infer<Remote[M]["result"]>> {
    if (this.closed) return Promise.reject(new RpcError("internal", "The connection is closed."));
    const id = this.nextId++;
    const encoded = encodeFrameWithin({ v: PROTOCOL_VERSION, id, method, params }, this.limits);
    // Refused before sending: the other side would drop it, and this call would never settle.
    if (!encoded.ok) {
      return Promise.reject(
        new RpcError(encoded.error.code, `The ${method} request was not sent: ${encoded.error.message}`),
      );
    }
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve: resolve as (v: unknown) => void, reject, method });
      this.options.send(encoded.line);
    });
  }

  /** Push to the other side: only a push of `Sends`, with the data its schema takes, compiles. */
  push(...[push, data]: PushArgs<Sends>): PushOutcome {
    if (this.closed) return { ok: false, error: { code: "internal", message: "The connection is closed." } };
    const encoded = encodeFrameWithin({ v: PROTOCOL_VERSION, push, data }, this.limits);
    if (!encoded.ok) return encoded;
    this.options.send(encoded.line);
    return { ok: true };
  }

  /** The transport ended: every pending call fails. */
  close(reason = "The connection closed."): void {
    if (this.closed) return;
    this.closed = true;
    for (const pending of this.pending.values()) pending.reject(new RpcError("internal", reason));
    this.pending.clear();
  }

  get isClosed(): boolean {
    return this.closed;
  }

  private refuse(id: string | number | null, code: ProtocolErrorCode, message: string): void {
    const error = { code, message };
    this.options.onRefused?.(error);
    if (!this.closed) this.sendReply({ v: PROTOCOL_VERSION, id, error });
  }

  /**
   * Refuse a frame that was not (or not fully) handled, answering whoever waits on it: a request's
   * sender gets the error for its id; a refused reply settles this side's own call with
   * `reply_too_large` or `internal` (the other side did handle the request). Anything else is
   * answered without an id.
   */
  private refuseFrame(shape: FrameShape, code: ProtocolErrorCode, message: string): void {
    if (shape.kind === "request") {
      this.refuse(shape.id, code, message);
      return;
    }
    if (shape.kind === "reply") {
      this.options.onRefused?.({ code, message });
      const pending = shape.id === null ? undefined : this.pending.get(shape.id);
      if (shape.id === null || !pending) return;
      this.pending.delete(shape.id);
      const replyCode = code === "frame_too_large" || code === "frame_too_deep" ? "reply_too_large" : code;
      pending.reject(new RpcError(replyCode, `The reply to ${pending.method} was refused: ${message}`));
      return;
    }
    this.refuse(null, code, message);
  }

  /** Send a reply; a result that breaks a frame limit becomes an error for the same id. */
  private sendReply(frame: ReplyFrame): void {
    const encoded = encodeFrameWithin(frame, this.limits);
    if (encoded.ok) {
      this.options.send(encoded.line);
      return;
    }
    const code = encoded.error.code === "bad_frame" ? "internal" : "reply_too_large";
    const fallback = encodeFrameWithin(
      {
        v: PROTOCOL_VERSION,
        id: frame.id,
        error: { code, message: `The reply was not sent: ${encoded.error.message}` },
      },
      this.limits,
    );
    if (fallback.ok) this.options.send(fallback.line);
  }

  private receive(line: string): void {
    // Before any parser sees it: JSON.parse is iterative, but schemas and handlers recurse per level.
    // A frame with fewer brackets than the limit is not scanned: most frames, every one of a node.
    const { maxDepth } = this.limits;
    if (!cannotNestDeeperThan(line, maxDepth)) {
      const shape = inspectFrame(line, maxDepth);
      if (shape.tooDeep) {
        this.refuseFrame(shape, "frame_too_deep", `A frame nests deeper than ${maxDepth} levels.`);
        return;
      }
    }
    try {
      this.dispatch(line);
    } catch {
      // A bug or a callback's throw: this frame fails, the frames after it are still served.
      this.refuseFrame(inspectFrame(line), "internal", "This peer failed to handle a frame.");
    }
  }

  private dispatch(line: string): void {
    let raw: unknown;
    try {
      raw = JSON.parse(line);
    } catch {
      this.refuse(null, "bad_frame", "A frame is not valid JSON.");
      return;
    }
    if (typeof raw === "object" && raw !== null && "method" in raw) {
      this.receiveRequest(raw);
      return;
    }
    // The common reply, a result for a call this side made, checked by hand; any other goes to the schema.
    if (isResultReply(raw) && this.pending.has(raw.id)) {
      this.receiveReply({ v: PROTOCOL_VERSION, id: raw.id, result: raw.result });
      return;
    }
    const reply = replyFrameSchema.safeParse(raw);
    if (reply.success && "id" in reply.data && reply.data.id !== null && this.pending.has(reply.data.id)) {
      this.receiveReply(reply.data);
      return;
    }
    const push = pushFrameSchema.safeParse(raw);
    if (push.success) {
      this.options.onPush?.(push.data.push, push.data.data);
      return;
    }
    if (reply.success) return; // A reply to nothing we asked (e.g. to a refused frame): ignore.
    this.refuse(null, "bad_frame", "A frame is neither a request, a reply nor a push.");
  }

  private receiveReply(frame: z.infer<typeof replyFrameSchema>): void {
    const id = frame.id as string | number;
    const pending = this.pending.get(id);
    if (!pending) return;
    this.pending.delete(id);
    if ("error" in frame) {
      const error = protocolErrorSchema.safeParse(frame.error);
      pending.reject(
        error.success
          ? new RpcError(error.data.code, error.data.message)
          : new RpcError("bad_frame", "Malformed error."),
      );
      return;
    }
    const spec = this.options.remote?.[pending.method];
    if (spec?.quickResult?.(frame.result)) {
      pending.resolve(frame.result);
      return;
    }
    const schema = spec?.result;
    if (!schema) {
      pending.resolve(frame.result);
      return;
    }
    let parsed: ReturnType<typeof schema.safeParse>;
    try {
      parsed = schema.safeParse(frame.result);
    } catch {
      // Already taken off `pending`: settle the call here, or it would never be.
      pending.reject(new RpcError("internal", `The reply to ${pending.method} could not be checked.`));
      return;
    }
    if (parsed.success) pending.resolve(parsed.data);
    else
      pending.reject(new RpcError("bad_frame", `The reply to ${pending.method} did not match its schema.`));
  }

  private receiveRequest(raw: object): void {
    const frame = isPlainRequest(raw)
      ? { success: true as const, data: raw }
      : requestFrameSchema.safeParse(raw);
    const rawId = (raw as { id?: unknown }).id;
    const id = typeof rawId === "string" || typeof rawId === "number" ? rawId : null;
    if (!frame.success) {
      const version = (raw as { v?: unknown }).v;
      if (version !== PROTOCOL_VERSION) {
        this.refuse(
          id,
          "protocol_mismatch",
          `This peer speaks protocol ${PROTOCOL_VERSION}, not ${String(version)}.`,
        );
      } else {
        this.refuse(id, "bad_frame", "A request frame is malformed.");
      }
      return;
    }
    const { method } = frame.data;
    const local = this.options.local;
    // Own properties only: `toString` or `__proto__` must be unknown methods, not Object.prototype's.
    const spec = local && Object.hasOwn(local.methods, method) ? local.methods[method] : undefined;
    const handler =
      local && Object.hasOwn(local.handlers, method) ? local.handlers[method as keyof Local] : undefined;
    if (!spec || !handler) {
      this.refuse(frame.data.id, "unknown_method", `Unknown method ${method.slice(0, 100)}.`);
      return;
    }
    const params = spec.quickParams?.(frame.data.params)
      ? { success: true as const, data: frame.data.params }
      : spec.params.safeParse(frame.data.params);
    if (!params.success) {
      const issue = params.error.issues[0];
      const where = issue?.path.length ? ` at ${issue.path.join(".")}` : "";
      this.refuse(
        frame.data.id,
        "invalid_params",
        `Invalid params for ${method}${where}: ${issue?.message ?? "malformed"}.`,
      );
      return;
    }
    const requestId = frame.data.id;
    Promise.resolve()
      .then(() => (handler as (p: unknown) => unknown)(params.data))
      .then(
        (result) => {
          if (!this.closed) this.sendReply({ v: PROTOCOL_VERSION, id: requestId, result });
        },
        (error: unknown) => {
          if (!this.closed)
            this.sendReply({ v: PROTOCOL_VERSION, id: requestId, error: toProtocolError(error) });
        },
      );
  }
}

/**
 * A result reply as the reply schema's first form takes it, without zod: the version, an ID the schema
 * allows, a `result`, and no `error` (a frame with both takes the schema's way, which decides it as
 * before; other keys are dropped, as the schema strips them).
 */
function isResultReply(raw: unknown): raw is { id: string | number; result: unknown } {
  if (typeof raw !== "object" || raw === null || !("result" in raw) || "error" in raw) return false;
  const frame = raw as { v?: unknown; id?: unknown };
  if (frame.v !== PROTOCOL_VERSION) return false;
  const id = frame.id;
  return (typeof id === "string" && id.length <= 100) || Number.isSafeInteger(id);
}

const REQUEST_KEYS = new Set(["v", "id", "method", "params"]);

/**
 * A request frame as its schema takes it, without zod: the version, an ID the schema allows, a method
 * name of 1 to 100 characters, and no key the schema does not know (such a frame takes the schema's
 * way, which strips it).
 */
function isPlainRequest(raw: object): raw is RequestFrame {
  for (const key of Object.keys(raw)) if (!REQUEST_KEYS.has(key)) return false;
  const frame = raw as { v?: unknown; id?: unknown; method?: unknown };
  if (frame.v !== PROTOCOL_VERSION) return false;
  const { id, method } = frame;
  if (!((typeof id === "string" && id.length <= 100) || Number.isSafeInteger(id))) return false;
  return typeof method === "string" && method.length >= 1 && method.length <= 100;
}
