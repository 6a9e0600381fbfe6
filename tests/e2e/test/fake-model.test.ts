import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  type FakeModel,
  lastUserText,
  startFakeModel,
  text,
  toolCall,
  whenToolResultContains,
} from "@piw/test-kit";

let model: FakeModel;

beforeEach(async () => {
  model = await startFakeModel();
});

afterEach(async () => {
  await model.close();
});

function chat(body: Record<string, unknown>): Promise<Response> {
  return fetch(`${model.baseUrl}/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ model: model.modelId, ...body }),
  });
}

/** The parsed `data:` payloads of an SSE body, with the `[DONE]` marker kept as a string. */
async function sseData(response: Response): Promise<unknown[]> {
  const body = await response.text();
  return body
    .split("\n\n")
    .filter((frame) => frame.startsWith("data: "))
    .map((frame) => frame.slice("data: ".length))
    .map((data) => (data === "[DONE]" ? data : JSON.parse(data)));
}

describe("fake OpenAI chat-completions model", () => {
  it("listens on 127.0.0.1 only and lists its model", async () => {
    expect(model.baseUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/v1$/);
    const response = await fetch(`${model.baseUrl}/models`);
    expect(await response.json()).toMatchObject({ data: [{ id: model.modelId }] });
  });

  it("streams text as role, content deltas and a stop chunk, then [DONE]", async () => {
    model.reply(text("abcdef", { chunkSize: 4 }));

    const response = await chat({ stream: true, messages: [{ role: "user", content: "hi" }] });

    expect(response.headers.get("content-type")).toBe("text/event-stream");
    const frames = (await sseData(response)) as Array<{
      choices: Array<{ delta: unknown; finish_reason: unknown }>;
    }>;
    expect(frames.at(-1)).toBe("[DONE]");
    const chunks = frames.slice(0, -1).map((f) => f.choices[0]);
    expect(chunks.map((c) => c?.delta)).toEqual([
      { role: "assistant", content: "" },
      { content: "abcd" },
      { content: "ef" },
      {},
    ]);
    expect(chunks.map((c) => c?.finish_reason)).toEqual([null, null, null, "stop"]);
  });

  it("streams a tool call as id/name then argument deltas, finishing with tool_calls", async () => {
    model.reply(toolCall("workflow", { action: "submit", id: 3 }, "call_x"));

    const response = await chat({ stream: true, messages: [{ role: "user", content: "go" }] });

    const frames = (await sseData(response)).slice(0, -1) as Array<{
      choices: Array<{
        delta: { tool_calls?: Array<{ id?: string; function: { name?: string; arguments: string } }> };
        finish_reason: unknown;
      }>;
    }>;
    const toolDeltas = frames.flatMap((f) => f.choices[0]?.delta.tool_calls ?? []);
    expect(toolDeltas[0]).toMatchObject({ id: "call_x", function: { name: "workflow", arguments: "" } });
    const args = toolDeltas.map((d) => d.function.arguments).join("");
    expect(JSON.parse(args)).toEqual({ action: "submit", id: 3 });
    expect(frames.at(-1)?.choices[0]?.finish_reason).toBe("tool_calls");
  });

  it("answers non-streaming requests with one completion body", async () => {
    model.reply(toolCall("workflow", { action: "status" }));

    const response = await chat({ messages: [{ role: "user", content: "go" }] });

    expect(await response.json()).toMatchObject({
      object: "chat.completion",
      choices: [
        {
          finish_reason: "tool_calls",
          message: { role: "assistant", tool_calls: [{ type: "function", function: { name: "workflow" } }] },
        },
      ],
    });
  });

  it("consults one-shot replies first, in order, then the standing rules", async () => {
    model.reply((request) => text(`standing saw ${lastUserText(request)}`));
    model.replyOnce(text("first"));
    model.replyOnce(text("second"));
    const answers: unknown[] = [];

    for (const content of ["a", "b", "c"]) {
      const response = await chat({ messages: [{ role: "user", content }] });
      const body = (await response.json()) as { choices: Array<{ message: { content: string } }> };
      answers.push(body.choices[0]?.message.content);
    }

    expect(answers).toEqual(["first", "second", "standing saw c"]);
    expect(model.requests.map((r) => r.outcome)).toEqual(["replied", "replied", "replied"]);
  });

  it("matches a tool result by its text", async () => {
    model.reply(whenToolResultContains("RUN_OK", text("saw it")));
    const messages = [
      { role: "user", content: "go" },
      {
        role: "assistant",
        content: null,
        tool_calls: [{ id: "c1", type: "function", function: { name: "t", arguments: "{}" } }],
      },
      { role: "tool", tool_call_id: "c1", content: "status RUN_OK" },
    ];

    const response = await chat({ messages });

    expect(response.status).toBe(200);
    model.assertNoErrors();
  });

  it("rejects and records an unscripted request, and a script that throws", async () => {
    model.replyOnce(() => {
      throw new Error("boom");
    });

    const thrown = await chat({ messages: [{ role: "user", content: "first" }] });
    const unscripted = await chat({ messages: [{ role: "user", content: "second" }] });

    expect(thrown.status).toBe(500);
    expect(unscripted.status).toBe(400);
    expect(await unscripted.text()).toContain("no script matched request #2");
    expect(model.errors).toEqual([
      expect.stringContaining("script threw on request #1"),
      expect.stringContaining('unscripted request #2 (last user message: "second")'),
    ]);
    expect(() => model.assertNoErrors()).toThrow(/2 error\(s\)/);
  });

  it("waits for a future request and times out with the list of received ones", async () => {
    model.reply(text("ok"));
    const waiting = model.waitForRequest((r) => lastUserText(r) === "later");
    await chat({ messages: [{ role: "user", content: "later" }] });
    expect(lastUserText(await waiting)).toBe("later");

    await expect(model.waitForRequest(() => false, 100)).rejects.toThrow(
      /no matching request within 100 ms[\s\S]*request #1/,
    );
  });
});
