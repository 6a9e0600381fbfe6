import type { IncomingMessage, ServerResponse } from "node:http";

// The OpenAI chat-completions wire format of the fake model's replies: whole and streamed.

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

export function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    req.on("error", reject);
  });
}

export function sendJson(res: ServerResponse, status: number, value: unknown): void {
  const payload = JSON.stringify(value);
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(payload) });
  res.end(payload);
}

function toolCallId(spec: ToolCallSpec, counter: number, position: number): string {
  return spec.id ?? `call_fake_${counter}_${position}`;
}

const USAGE = { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 };

export function completionBody(id: string, model: string, reply: ModelReply, counter: number): unknown {
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
export async function streamReply(
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
