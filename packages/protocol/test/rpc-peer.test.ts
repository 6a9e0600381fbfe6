import { describe, expect, it } from "vitest";
import { z } from "zod";
import { boundSafeMessage, RpcError, RpcPeer } from "../src/index.js";

const methods = {
  add: { params: z.object({ a: z.number(), b: z.number() }), result: z.number() },
  boom: { params: z.object({}), result: z.number() },
};

function pair() {
  const frames: string[] = [];
  let client: RpcPeer<typeof methods, typeof methods> | undefined;
  const server = new RpcPeer<typeof methods, typeof methods>({
    send: (line) => client?.feed(line),
    local: {
      methods,
      handlers: {
        add: ({ a, b }) => a + b,
        boom: () => {
          throw new Error("secret detail /home/user");
        },
      },
    },
  });
  client = new RpcPeer<typeof methods, typeof methods>({
    send: (line) => {
      frames.push(line);
      server.feed(line);
    },
    remote: methods,
  });
  return { client, server, frames };
}

describe("RpcPeer", () => {
  it("calls a method and parses the result", async () => {
    const { client } = pair();
    await expect(client.call("add", { a: 2, b: 3 })).resolves.toBe(5);
  });

  it("turns a handler's throw into an internal error without its message", async () => {
    const { client } = pair();
    const error = await client.call("boom", {}).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RpcError);
    expect((error as RpcError).code).toBe("internal");
    expect((error as RpcError).message).not.toContain("secret");
  });

  it("answers malformed, oversized, unknown and wrong-version frames with typed errors and keeps serving", async () => {
    const replies: string[] = [];
    const server = new RpcPeer({
      send: (line) => replies.push(line),
      local: { methods: { add: methods.add }, handlers: { add: ({ a, b }) => a + b } },
      maxFrameBytes: 200,
    });
    server.feed("not json\n");
    server.feed(`${"x".repeat(500)}\n`);
    server.feed(`${JSON.stringify({ v: 1, id: 1, method: "nope", params: {} })}\n`);
    server.feed(`${JSON.stringify({ v: 2, id: 2, method: "add", params: { a: 1, b: 1 } })}\n`);
    server.feed(`${JSON.stringify({ v: 1, id: 3, method: "add", params: { a: "x" } })}\n`);
    server.feed(`${JSON.stringify({ v: 1, id: 4, method: "add", params: { a: 1, b: 1 } })}\n`);
    await new Promise((r) => setTimeout(r, 10));
    const codes = replies.map((r) => JSON.parse(r) as { error?: { code: string }; result?: number });
    expect(codes.map((c) => c.error?.code ?? c.result)).toEqual([
      "bad_frame",
      "frame_too_large",
      "unknown_method",
      "protocol_mismatch",
      "invalid_params",
      2,
    ]);
  });

  it("takes a reply its method's quick check passes as it is, and parses any other with the schema", async () => {
    const lines: string[] = [];
    let quickCalls = 0;
    const remote = {
      // The schema doubles the number, which the quick check would not: only its path changes a value.
      get: {
        params: z.object({}),
        result: z.number().transform((n) => n * 2),
        quickResult: (value: unknown) => {
          quickCalls += 1;
          return value === 7;
        },
      },
    };
    const client = new RpcPeer<Record<string, never>, typeof remote>({
      send: (line) => lines.push(line),
      remote,
    });
    const reply = (result: unknown, extra: object = {}) => {
      const { id } = JSON.parse(lines.at(-1) ?? "{}") as { id: number };
      client.feed(`${JSON.stringify({ v: 1, id, result, ...extra })}\n`);
    };
    const quick = client.call("get", {});
    reply(7, { note: "dropped, as the schema drops it" });
    await expect(quick).resolves.toBe(7);
    const full = client.call("get", {});
    reply(4);
    await expect(full).resolves.toBe(8);
    const bad = client.call("get", {});
    reply("four");
    await expect(bad).rejects.toMatchObject({ code: "bad_frame" });
    expect(quickCalls).toBe(3);
    // A frame with both a result and an error is the reply schema's to read (it takes the result);
    // one of another version is no reply at all.
    const both = client.call("get", {});
    reply(4, { error: { code: "internal", message: "x" } });
    await expect(both).resolves.toBe(8);
    const wrong = client.call("get", {});
    const { id } = JSON.parse(lines.at(-1) ?? "{}") as { id: number };
    client.feed(`${JSON.stringify({ v: 2, id, result: 7 })}\n`);
    client.close();
    await expect(wrong).rejects.toMatchObject({ code: "internal" });
    expect(quickCalls).toBe(4);
  });

  it("reassembles frames split across chunks", async () => {
    const replies: string[] = [];
    const server = new RpcPeer({
      send: (line) => replies.push(line),
      local: { methods: { add: methods.add }, handlers: { add: ({ a, b }) => a + b } },
    });
    const frame = JSON.stringify({ v: 1, id: 9, method: "add", params: { a: 20, b: 22 } });
    server.feed(frame.slice(0, 10));
    server.feed(`${frame.slice(10)}\n`);
    await new Promise((r) => setTimeout(r, 10));
    expect(JSON.parse(replies[0] ?? "{}")).toEqual({ v: 1, id: 9, result: 42 });
  });
});

describe("boundSafeMessage", () => {
  it("bounds by UTF-8 bytes and strips control characters", () => {
    const bounded = boundSafeMessage(`a\u0000b${"é".repeat(400)}`, 100);
    expect(new TextEncoder().encode(bounded).byteLength).toBeLessThanOrEqual(100);
    expect(bounded.startsWith("a b")).toBe(true);
    expect(bounded.endsWith("…")).toBe(true);
  });
});
