import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/** One OpenAI chat message as the client sent it. `content` is a string or a list of parts. */
export interface ChatMessage {
  role: "system" | "developer" | "user" | "assistant" | "tool";
  content?: string | ChatContentPart[] | null;
  tool_calls?: ChatToolCall[];
  tool_call_id?: string;
  name?: string;
}

interface ChatContentPart {
  type: string;
  text?: string;
}

interface ChatToolCall {
  id: string;
  type: "function";
  function: { name: string; arguments: string };
}

interface ChatTool {
  type: "function";
  function: { name: string; description?: string; parameters?: unknown };
}

interface ChatCompletionBody {
  model: string;
  messages: ChatMessage[];
  tools?: ChatTool[];
  stream?: boolean;
  [key: string]: unknown;
}

/** A request the fake model received, as a script and a test see it. */
export interface ModelRequest {
  /** 1-based arrival order. */
  index: number;
  body: ChatCompletionBody;
  messages: ChatMessage[];
  tools: ChatTool[];
  stream: boolean;
  /** What the fake answered; unset while the reply is still streaming. */
  outcome?: "replied" | "unscripted" | "script_error" | "client_closed";
}

/** What a script returns for one request. */
export type ModelReply =
  | { type: "text"; text: string; stream?: StreamPacing }
  | { type: "tool_calls"; calls: ToolCallSpec[]; text?: string; stream?: StreamPacing }
  | { type: "http_error"; status: number; message: string };

interface ToolCallSpec {
  name: string;
  arguments: Record<string, unknown>;
  id?: string;
}

/** How a streamed reply is cut and paced; a slow stream lets a test abort mid-reply. */
export interface StreamPacing {
  /** Characters per content delta (default: the whole text in one delta). */
  chunkSize?: number;
  /** Delay before each delta, in ms (default 0). */
  delayMs?: number;
  /**
   * Once at least `chars` characters of the text went out, wait for `until` before the rest: a test
   * sees a reply half streamed for as long as it needs, with no timing to guess.
   */
  holdAfter?: { chars: number; until: Promise<unknown> };
}

/** A script returns a reply, or `undefined` to say "not mine" and let the next script try. */
export type ReplyScript = (request: ModelRequest) => ModelReply | undefined;

export interface FakeModel {
  /** `http://127.0.0.1:<port>/v1` */
  readonly baseUrl: string;
  readonly port: number;
  readonly modelId: string;
  /** Every chat request received, in arrival order. */
  readonly requests: readonly ModelRequest[];
  /** Requests no script answered, or whose script threw, as readable lines. */
  readonly errors: readonly string[];
  /** A standing rule, consulted for every request after the one-shot queue. */
  reply(script: ReplyScript | ModelReply): void;
  /** A one-shot reply: the head of the queue answers the next request it accepts, then is dropped. */
  replyOnce(script: ReplyScript | ModelReply): void;
  /** Resolves with the first request (already received or future) matching `predicate`. */
  waitForRequest(predicate: (request: ModelRequest) => boolean, timeoutMs?: number): Promise<ModelRequest>;
  /** Throws listing every unscripted or failed request. */
  assertNoErrors(): void;
  close(): Promise<void>;
}

const FAKE_MODEL_ID = "fake-model";

export function text(value: string, stream?: StreamPacing): ModelReply {
  return stream ? { type: "text", text: value, stream } : { type: "text", text: value };
}

export function toolCall(name: string, args: Record<string, unknown>, id?: string): ModelReply {
  return { type: "tool_calls", calls: [id ? { name, arguments: args, id } : { name, arguments: args }] };
}

/** The plain text of a message: a string content, or its text parts joined. */
export function messageText(message: ChatMessage | undefined): string {
  if (!message || message.content == null) return "";
  if (typeof message.content === "string") return message.content;
  return message.content
    .map((part) => (typeof part.text === "string" ? part.text : ""))
    .filter((part) => part.length > 0)
    .join("\n");
}

/** The last message that is not a system/developer prompt. */
export function lastMessage(request: ModelRequest): ChatMessage | undefined {
  return request.messages.findLast((m) => m.role !== "system" && m.role !== "developer");
}

export function lastMessageText(request: ModelRequest): string {
  return messageText(lastMessage(request));
}

export function lastUserText(request: ModelRequest): string {
  return messageText(request.messages.findLast((m) => m.role === "user"));
}

/** The text of the last message when it is a tool result, else `undefined`. */
export function lastToolResultText(request: ModelRequest): string | undefined {
  const last = lastMessage(request);
  return last?.role === "tool" ? messageText(last) : undefined;
}

/** A script: when the last message is a tool result containing `needle`, answer `reply`. */
export function whenToolResultContains(needle: string, reply: ModelReply): ReplyScript {
  return (request) => (lastToolResultText(request)?.includes(needle) ? reply : undefined);
}

/** A script: when the last non-system message (user, custom or tool) contains `needle`, answer `reply`. */
export function whenLastMessageContains(needle: string, reply: ModelReply): ReplyScript {
  return (request) => (lastMessageText(request).includes(needle) ? reply : undefined);
}

/** Starts the fake on 127.0.0.1 at a random port. */
export async function startFakeModel(options: { modelId?: string } = {}): Promise<FakeModel> {
  const modelId = options.modelId ?? FAKE_MODEL_ID;
  const requests: ModelRequest[] = [];
  const errors: string[] = [];
  const standing: ReplyScript[] = [];
  const queue: ReplyScript[] = [];
  const waiters = new Set<{ predicate: (r: ModelRequest) => boolean; resolve: (r: ModelRequest) => void }>();
  let completionCounter = 0;

  const asScript = (script: ReplyScript | ModelReply): ReplyScript =>
    typeof script === "function" ? script : () => script;

  function chooseReply(request: ModelRequest): ModelReply | undefined {
    const head = queue[0];
    if (head) {
      let reply: ModelReply | undefined;
      try {
        reply = head(request);
      } catch (error) {
        // A one-shot script that throws is spent: it must not fail every later request too.
        queue.shift();
        throw error;
      }
      if (reply) {
        queue.shift();
        return reply;
      }
    }
    for (const script of standing) {
      const reply = script(request);
      if (reply) return reply;
    }
    return undefined;
  }

  function describe(request: ModelRequest): string {
    const last = lastMessage(request);
    const preview = messageText(last).slice(0, 200);
    return `request #${request.index} (last ${last?.role ?? "none"} message: ${JSON.stringify(preview)})`;
  }

  async function handleChat(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const raw = await readBody(req);
    let body: ChatCompletionBody;
    try {
      body = JSON.parse(raw) as ChatCompletionBody;
    } catch {
      errors.push(`unparseable request body: ${raw.slice(0, 200)}`);
      sendJson(res, 400, { error: { message: "fake model: body is not JSON" } });
      return;
    }
    const request: ModelRequest = {
      index: requests.length + 1,
      body,
      messages: Array.isArray(body.messages) ? body.messages : [],
      tools: Array.isArray(body.tools) ? body.tools : [],
      stream: body.stream === true,
    };
    requests.push(request);
    for (const waiter of waiters) {
      if (waiter.predicate(request)) {
        waiters.delete(waiter);
        waiter.resolve(request);
      }
    }

    let reply: ModelReply | undefined;
    try {
      reply = chooseReply(request);
    } catch (error) {
      request.outcome = "script_error";
      const message = error instanceof Error ? error.message : String(error);
      errors.push(`script threw on ${describe(request)}: ${message}`);
      sendJson(res, 500, { error: { message: `fake model script threw: ${message}` } });
      return;
    }
    if (!reply) {
      request.outcome = "unscripted";
      errors.push(`unscripted ${describe(request)}`);
      // A 400 is not retried by the client, so the run fails at once with this text.
      sendJson(res, 400, {
        error: { message: `fake model: no script matched ${describe(request)}`, type: "unscripted" },
      });
      return;
    }
    if (reply.type === "http_error") {
      request.outcome = "replied";
      sendJson(res, reply.status, { error: { message: reply.message } });
      return;
    }

    completionCounter += 1;
    const completionId = `chatcmpl-fake-${completionCounter}`;
    if (!request.stream) {
      request.outcome = "replied";
      sendJson(res, 200, completionBody(completionId, modelId, reply, completionCounter));
      return;
    }
    const finished = await streamReply(res, completionId, modelId, reply, completionCounter);
    request.outcome = finished ? "replied" : "client_closed";
  }

  const server: Server = createServer((req, res) => {
    const url = req.url ?? "";
    if (req.method === "GET" && url.startsWith("/v1/models")) {
      sendJson(res, 200, { object: "list", data: [{ id: modelId, object: "model", owned_by: "piw-e2e" }] });
      return;
    }
    if (req.method === "POST" && url.startsWith("/v1/chat/completions")) {
      handleChat(req, res).catch((error: unknown) => {
        errors.push(`fake model crashed: ${error instanceof Error ? error.message : String(error)}`);
        if (!res.headersSent) sendJson(res, 500, { error: { message: "fake model crashed" } });
        else res.destroy();
      });
      return;
    }
    errors.push(`unexpected ${req.method} ${url}`);
    sendJson(res, 404, { error: { message: `fake model: no route for ${req.method} ${url}` } });
  });

  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const port = (server.address() as AddressInfo).port;

  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    port,
    modelId,
    requests,
    errors,
    reply(script) {
      standing.push(asScript(script));
    },
    replyOnce(script) {
      queue.push(asScript(script));
    },
    waitForRequest(predicate, timeoutMs = 15_000) {
      const seen = requests.find(predicate);
      if (seen) return Promise.resolve(seen);
      return new Promise((resolve, reject) => {
        const waiter = {
          predicate,
          resolve: (r: ModelRequest) => {
            clearTimeout(timer);
            resolve(r);
          },
        };
        const timer = setTimeout(() => {
          waiters.delete(waiter);
          const seenList = requests.map((r) => `  ${describe(r)}`).join("\n") || "  (none)";
          reject(new Error(`fake model: no matching request within ${timeoutMs} ms; received:\n${seenList}`));
        }, timeoutMs);
        waiters.add(waiter);
      });
    },
    assertNoErrors() {
      if (errors.length > 0)
        throw new Error(`fake model saw ${errors.length} error(s):\n${errors.join("\n")}`);
    },
    close() {
      return new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      });
    },
  };
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    req.on("error", reject);
  });
}

function sendJson(res: ServerResponse, status: number, value: unknown): void {
  const payload = JSON.stringify(value);
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(payload) });
  res.end(payload);
}

function toolCallId(spec: ToolCallSpec, counter: number, position: number): string {
  return spec.id ?? `call_fake_${counter}_${position}`;
}

const USAGE = { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 };

function completionBody(id: string, model: string, reply: ModelReply, counter: number): unknown {
  const message: Record<string, unknown> = { role: "assistant", content: null };
  let finishReason = "stop";
  if (reply.type === "text") message.content = reply.text;
  if (reply.type === "tool_calls") {
    message.content = reply.text ?? null;
    message.tool_calls = reply.calls.map((call, i) => ({
      id: toolCallId(call, counter, i),
      type: "function",
      function: { name: call.name, arguments: JSON.stringify(call.arguments) },
    }));
    finishReason = "tool_calls";
  }
  return {
    id,
    object: "chat.completion",
    created: Math.floor(Date.now() / 1000),
    model,
    choices: [{ index: 0, message, finish_reason: finishReason }],
    usage: USAGE,
  };
}

function chunksOf(value: string, size: number | undefined): string[] {
  if (!size || size <= 0 || value.length <= size) return [value];
  const parts: string[] = [];
  for (let i = 0; i < value.length; i += size) parts.push(value.slice(i, i + size));
  return parts;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Streams one reply as SSE; resolves false when the client hung up first (an abort). */
async function streamReply(
  res: ServerResponse,
  id: string,
  model: string,
  reply: Exclude<ModelReply, { type: "http_error" }>,
  counter: number,
): Promise<boolean> {
  let closed = false;
  res.on("close", () => {
    closed = !res.writableFinished;
  });
  res.writeHead(200, {
    "content-type": "text/event-stream",
    "cache-control": "no-cache",
    connection: "keep-alive",
  });
  const created = Math.floor(Date.now() / 1000);
  const send = (delta: Record<string, unknown>, finishReason: string | null, usage?: unknown) => {
    const chunk: Record<string, unknown> = {
      id,
      object: "chat.completion.chunk",
      created,
      model,
      choices: [{ index: 0, delta, finish_reason: finishReason }],
    };
    if (usage) chunk.usage = usage;
    res.write(`data: ${JSON.stringify(chunk)}\n\n`);
  };
  const pace = reply.stream ?? {};

  send({ role: "assistant", content: "" }, null);
  const textValue = reply.text ?? "";
  let sent = 0;
  let hold = pace.holdAfter;
  for (const part of textValue.length > 0 ? chunksOf(textValue, pace.chunkSize) : []) {
    if (pace.delayMs) await sleep(pace.delayMs);
    if (closed) return false;
    send({ content: part }, null);
    sent += part.length;
    if (hold !== undefined && sent >= hold.chars) {
      await hold.until;
      hold = undefined;
    }
  }
  if (reply.type === "tool_calls") {
    for (const [position, call] of reply.calls.entries()) {
      if (pace.delayMs) await sleep(pace.delayMs);
      if (closed) return false;
      send(
        {
          tool_calls: [
            {
              index: position,
              id: toolCallId(call, counter, position),
              type: "function",
              function: { name: call.name, arguments: "" },
            },
          ],
        },
        null,
      );
      for (const part of chunksOf(JSON.stringify(call.arguments), pace.chunkSize)) {
        send({ tool_calls: [{ index: position, function: { arguments: part } }] }, null);
      }
    }
  }
  if (closed) return false;
  send({}, reply.type === "tool_calls" ? "tool_calls" : "stop", USAGE);
  res.write("data: [DONE]\n\n");
  res.end();
  return true;
}
