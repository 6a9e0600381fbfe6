import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { cannotNestDeeperThan, utf8ByteLength } from "../src/frame-shape.js";
import { inspectFrame, MAX_FRAME_BYTES, MAX_FRAME_DEPTH, RpcError, RpcPeer } from "../src/index.js";

const methods = {
  // z.json() recurses once per level, like every value schema of the real method tables.
  echo: { params: z.object({ value: z.json() }), result: z.json() },
  add: { params: z.object({ a: z.number(), b: z.number() }), result: z.number() },
  big: { params: z.object({ bytes: z.number().int() }), result: z.string() },
};

type Reply = { id: string | number | null; result?: unknown; error?: { code: string; message: string } };

/** A server peer and every reply it wrote, parsed. */
function server(options: { onPush?: (push: string, data: unknown) => void } = {}) {
  const replies: Reply[] = [];
  const peer = new RpcPeer<typeof methods>({
    send: (line) => replies.push(JSON.parse(line) as Reply),
    local: {
      methods,
      handlers: {
        echo: ({ value }) => value,
        add: ({ a, b }) => a + b,
        big: ({ bytes }) => "x".repeat(bytes),
      },
    },
    ...options,
  });
  return { peer, replies };
}

const settle = () => new Promise((r) => setTimeout(r, 20));
const nested = (depth: number) => `${"[".repeat(depth)}${"]".repeat(depth)}`;
const request = (id: number | string, method: string, params: unknown) =>
  JSON.stringify({ v: 1, id, method, params });
const deepRequest = (id: number, depth: number) =>
  `{"v":1,"id":${id},"method":"echo","params":{"value":${nested(depth)}}}`;

/** Two peers wired back to back, each feeding what the other sends. */
function pair() {
  let client: RpcPeer<typeof methods, typeof methods> | undefined;
  const sent: string[] = [];
  const srv = new RpcPeer<typeof methods>({
    send: (line) => client?.feed(line),
    local: {
      methods,
      handlers: {
        echo: ({ value }) => value,
        add: ({ a, b }) => a + b,
        big: ({ bytes }) => "é".repeat(bytes),
      },
    },
  });
  client = new RpcPeer<typeof methods, typeof methods>({
    send: (line) => {
      sent.push(line);
      srv.feed(line);
    },
    remote: methods,
  });
  return { client, sent };
}

describe("nesting depth", () => {
  it("answers a 3,000-deep frame with frame_too_deep for its id and serves the frames after it in the same chunk", async () => {
    const { peer, replies } = server();
    const chunk = [
      deepRequest(1, 3_000),
      request(2, "add", { a: 1, b: 2 }),
      request(3, "echo", { value: { ok: [1, 2] } }),
      "",
    ].join("\n");
    expect(() => peer.feed(chunk)).not.toThrow();
    await settle();
    expect(replies).toEqual([
      {
        v: 1,
        id: 1,
        error: { code: "frame_too_deep", message: expect.stringContaining(`${MAX_FRAME_DEPTH}`) },
      },
      { v: 1, id: 2, result: 3 },
      { v: 1, id: 3, result: { ok: [1, 2] } },
    ]);
  });

  it("takes values nested just under the limit", async () => {
    const { client } = pair();
    // The request's envelope adds two levels (the frame and its params): this is exactly the limit.
    const value = JSON.parse(nested(MAX_FRAME_DEPTH - 2));
    await expect(client.call("echo", { value })).resolves.toEqual(value);
  });

  it("refuses a call whose own request nests too deeply, without sending it", async () => {
    const { client, sent } = pair();
    const error = await client
      .call("echo", { value: JSON.parse(nested(MAX_FRAME_DEPTH + 10)) })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RpcError);
    expect((error as RpcError).code).toBe("frame_too_deep");
    expect(sent).toEqual([]);
    await expect(client.call("add", { a: 1, b: 1 })).resolves.toBe(2);
  });

  it("settles the caller with reply_too_large when the reply it is sent is too deep", async () => {
    let client: RpcPeer<typeof methods, typeof methods> | undefined;
    const deep = nested(3_000);
    const foreign = (line: string) => {
      const { id } = JSON.parse(line) as { id: number };
      // A peer without the sender-side check: its reply arrives whole, and too deep to parse.
      client?.feed(`{"v":1,"id":${id},"result":${deep}}\n`);
    };
    client = new RpcPeer<typeof methods, typeof methods>({ send: foreign, remote: methods });
    const error = await client.call("echo", { value: 1 }).catch((e: unknown) => e);
    expect((error as RpcError).code).toBe("reply_too_large");
  });

  it("contains a push handler's throw to its frame", async () => {
    const { peer, replies } = server({
      onPush: () => {
        throw new RangeError("Maximum call stack size exceeded");
      },
    });
    peer.feed(
      `${JSON.stringify({ v: 1, push: "cancel", data: {} })}\n${request(7, "add", { a: 2, b: 2 })}\n`,
    );
    await settle();
    expect(replies.map((r) => [r.id, r.error?.code ?? r.result])).toEqual([
      [null, "internal"],
      [7, 4],
    ]);
  });
});

describe("frame size counts UTF-8 bytes", () => {
  it("refuses a frame of two-byte characters under the limit in characters but over it in bytes", async () => {
    const { peer, replies } = server();
    const text = "é".repeat(600_000); // 600,000 characters, 1,200,000 bytes
    const frame = request(11, "echo", { value: text });
    expect(frame.length).toBeLessThan(MAX_FRAME_BYTES);
    peer.feed(`${frame}\n${request(12, "add", { a: 5, b: 5 })}\n`);
    await settle();
    expect(replies.map((r) => [r.id, r.error?.code ?? r.result])).toEqual([
      [11, "frame_too_large"],
      [12, 10],
    ]);
  });

  it("refuses the same frame when it arrives in many chunks", async () => {
    const { peer, replies } = server();
    const frame = `${request(13, "echo", { value: "€".repeat(400_000) })}\n${request(14, "add", { a: 1, b: 0 })}\n`;
    for (let at = 0; at < frame.length; at += 65_536) peer.feed(frame.slice(at, at + 65_536));
    await settle();
    expect(replies.map((r) => [r.id, r.error?.code ?? r.result])).toEqual([
      [13, "frame_too_large"],
      [14, 1],
    ]);
  });

  it("refuses a call whose request is over the limit in bytes locally, with nothing sent", async () => {
    const { client, sent } = pair();
    const error = await client.call("echo", { value: "é".repeat(600_000) }).catch((e: unknown) => e);
    expect((error as RpcError).code).toBe("frame_too_large");
    expect((error as RpcError).message).toContain(`${MAX_FRAME_BYTES}`);
    expect(sent).toEqual([]);
  });

  it("settles the caller with reply_too_large when the handler's result is over the limit", async () => {
    const { client } = pair();
    const error = await client.call("big", { bytes: 600_000 }).catch((e: unknown) => e);
    expect((error as RpcError).code).toBe("reply_too_large");
    await expect(client.call("big", { bytes: 1_000 })).resolves.toHaveLength(1_000);
  });

  it("settles the caller with reply_too_large when an oversized reply arrives from a peer without the check", async () => {
    let client: RpcPeer<typeof methods, typeof methods> | undefined;
    client = new RpcPeer<typeof methods, typeof methods>({
      send: (line) => {
        const { id } = JSON.parse(line) as { id: number };
        client?.feed(`${JSON.stringify({ v: 1, id, result: "x".repeat(MAX_FRAME_BYTES) })}\n`);
      },
      remote: methods,
    });
    const error = await client.call("big", { bytes: 1 }).catch((e: unknown) => e);
    expect((error as RpcError).code).toBe("reply_too_large");
  });
});

describe("inspectFrame", () => {
  it("reads the id and kind of a frame without parsing it, and ignores brackets inside strings", () => {
    expect(inspectFrame('{"v":1,"id":42,"method":"x","params":{"s":"[[[\\"{"}}')).toEqual({
      id: 42,
      kind: "request",
      tooDeep: false,
    });
    expect(inspectFrame('{"v":1,"id":"a\\"b","result":[1]}')).toEqual({
      id: 'a"b',
      kind: "reply",
      tooDeep: false,
    });
    expect(inspectFrame('{"v":1,"push":"run.view","data":{"id":3}}')).toEqual({
      id: null,
      kind: "push",
      tooDeep: false,
    });
    expect(inspectFrame(`{"v":1,"id":5,"method":"m","params":"${"[".repeat(500)}"}`, 4).tooDeep).toBe(false);
    expect(inspectFrame(`{"v":1,"id":5,"method":"m","params":${nested(5)}}`, 4)).toEqual({
      id: 5,
      kind: "request",
      tooDeep: true,
    });
  });
});

describe("utf8ByteLength", () => {
  it("counts what the UTF-8 encoder writes, ASCII or not, lone surrogates as U+FFFD", () => {
    const encoder = new TextEncoder();
    const textArb = fc.oneof(
      fc.string({ unit: "binary", maxLength: 40 }),
      fc.string({ maxLength: 40 }),
      fc.string({ unit: fc.constantFrom("a", "\u007f", "\u0080", "é", "€", "\ud83d", "\ude00", "😀") }),
    );
    fc.assert(
      fc.property(textArb, (text) => {
        expect(utf8ByteLength(text)).toBe(encoder.encode(text).length);
      }),
      { numRuns: 5000, seed: 29 },
    );
  });
});

describe("cannotNestDeeperThan", () => {
  it("never clears a text that the full scan finds too deep", () => {
    const textArb = fc
      .array(fc.constantFrom("{", "}", "[", "]", '"', "\\", ",", ":", "a", "1"), { maxLength: 60 })
      .map((chars) => chars.join(""));
    fc.assert(
      fc.property(textArb, fc.integer({ min: 0, max: 12 }), (text, maxDepth) => {
        if (cannotNestDeeperThan(text, maxDepth)) expect(inspectFrame(text, maxDepth).tooDeep).toBe(false);
      }),
      { numRuns: 5000, seed: 29 },
    );
  });

  it("sends the frames with more brackets than the limit to the full scan, which still takes a shallow one", () => {
    const server1 = server();
    const value = `${"[".repeat(MAX_FRAME_DEPTH + 10)}`;
    server1.peer.feed(`${JSON.stringify({ v: 1, id: 1, method: "echo", params: { value } })}\n`);
    server1.peer.feed(`{"v":1,"id":2,"method":"echo","params":{"value":${nested(MAX_FRAME_DEPTH)}}}\n`);
    return new Promise<void>((done) => {
      setImmediate(() => {
        expect(server1.replies.find((r) => r.id === 1)?.result).toBe(value);
        expect(server1.replies.find((r) => r.id === 2)?.error?.code).toBe("frame_too_deep");
        done();
      });
    });
  });
});

describe("every request gets exactly one reply, whatever comes before it in the stream", () => {
  it("holds for random mixes of deep, oversized, multi-byte, malformed and valid frames", async () => {
    const frameArb = fc.oneof(
      fc.record({
        kind: fc.constant("valid" as const),
        a: fc.integer({ min: -1000, max: 1000 }),
        b: fc.integer({ min: -1000, max: 1000 }),
      }),
      fc.record({
        kind: fc.constant("deep" as const),
        depth: fc.integer({ min: MAX_FRAME_DEPTH, max: 20_000 }),
      }),
      fc.record({ kind: fc.constant("oversized" as const), char: fc.constantFrom("x", "é", "€", "😀") }),
      fc.record({ kind: fc.constant("junk" as const), text: fc.string({ maxLength: 50 }) }),
    );
    await fc.assert(
      fc.asyncProperty(
        fc.array(frameArb, { minLength: 1, maxLength: 12 }),
        fc.integer({ min: 1, max: 4096 }),
        async (frames, cut) => {
          const { peer, replies } = server();
          const expected = new Map<number, string | number>();
          const lines = frames.map((f, i) => {
            const id = i + 1;
            switch (f.kind) {
              case "valid":
                expected.set(id, f.a + f.b);
                return request(id, "add", { a: f.a, b: f.b });
              case "deep":
                // The envelope adds two levels, so even the smallest depth drawn breaks the limit.
                expected.set(id, "frame_too_deep");
                return deepRequest(id, f.depth);
              case "oversized": {
                expected.set(id, "frame_too_large");
                const count = Math.ceil(MAX_FRAME_BYTES / Buffer.byteLength(f.char)) + 1;
                return request(id, "echo", { value: f.char.repeat(count) });
              }
              case "junk":
                return f.text.replace(/\n/g, " ");
              default:
                return f satisfies never;
            }
          });
          const stream = `${lines.join("\n")}\n`;
          const size = Math.max(1, Math.floor(stream.length / cut));
          for (let at = 0; at < stream.length; at += size) peer.feed(stream.slice(at, at + size));
          await settle();
          for (const [id, want] of expected) {
            const got = replies.filter((r) => r.id === id);
            expect(got).toHaveLength(1);
            expect(got[0]?.error?.code ?? got[0]?.result).toBe(want);
          }
        },
      ),
      { numRuns: 40, seed: Number(process.env.PIW_FUZZ_SEED ?? 5) },
    );
  }, 60_000);
});
