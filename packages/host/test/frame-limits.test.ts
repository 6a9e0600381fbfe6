import { readFileSync } from "node:fs";
import { join } from "node:path";
import { MAX_FRAME_BYTES, MAX_FRAME_DEPTH } from "@piw/protocol";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { isAlive, waitFor } from "@piw/test-kit";
import type { RunningHost } from "../src/index.js";
import { rawSocket, type Sandbox, sandbox, start, TestClient, writeWorkflow } from "./host-fixture.js";

let box: Sandbox;
let host: RunningHost | undefined;
let client: TestClient | undefined;
let hostLog: string[] = [];
beforeEach(() => {
  box = sandbox();
  hostLog = [];
});
afterEach(async () => {
  client?.close();
  client = undefined;
  await host?.stop();
  host = undefined;
  box.cleanup();
});

async function open(extra: Parameters<typeof start>[1] = {}): Promise<TestClient> {
  host = await start(box, { log: (line) => hostLog.push(line), ...extra });
  client = await TestClient.connect(host.socketPath);
  return client;
}

const frame = (value: unknown) => `${JSON.stringify(value)}\n`;
const nested = (depth: number) => `${"[".repeat(depth)}${"]".repeat(depth)}`;

describe("a frame nested 3,000 deep", () => {
  it("gets frame_too_deep from the host's client socket, and the requests written after it are answered", async () => {
    const c = await open();
    const raw = await rawSocket((host as RunningHost).socketPath);
    raw.socket.write(frame({ v: 1, id: 1, method: "hello", params: { protocol: 1, client: "test" } }));
    expect((await raw.next())[0]).toMatchObject({ id: 1, result: { protocol: 1 } });
    // About 6 KB; `runs.reserve` parses its manifest with a recursive JSON schema.
    const deep = `{"v":1,"id":"deep","method":"runs.reserve","params":{"manifest":${nested(3_000)}}}\n`;
    raw.socket.write(
      deep +
        frame({ v: 1, id: "after-1", method: "host.status", params: {} }) +
        frame({ v: 1, id: "after-2", method: "runs.get", params: { runId: "nobody-1" } }),
    );
    const replies = await raw.next(3);
    expect(replies).toEqual([
      {
        v: 1,
        id: "deep",
        error: { code: "frame_too_deep", message: expect.stringContaining(`${MAX_FRAME_DEPTH}`) },
      },
      { v: 1, id: "after-1", result: expect.objectContaining({ pid: process.pid }) },
      { v: 1, id: "after-2", result: null },
    ]);
    raw.socket.destroy();
    await expect(c.call("runs.list", {})).resolves.toEqual([]);
  });

  it("gets frame_too_deep on the host's worker channel, and the worker's next request in the same write is served", async () => {
    const replies = join(box.dir, "replies.jsonl");
    // A worker that misbehaves on purpose: once assigned, it writes a deep visit.finish and its hello
    // in one write, records the host's replies and leaves.
    const worker = `
      const { appendFileSync } = require("node:fs");
      let buffer = "";
      const seen = new Set();
      process.stdin.setEncoding("utf8");
      process.stdin.on("data", (chunk) => {
        buffer += chunk;
        for (let nl = buffer.indexOf("\\n"); nl >= 0; nl = buffer.indexOf("\\n")) {
          const frame = JSON.parse(buffer.slice(0, nl));
          buffer = buffer.slice(nl + 1);
          if (frame.push === "assign") {
            const deep = "[".repeat(3000) + "]".repeat(3000);
            process.stdout.write(
              '{"v":1,"id":1,"method":"visit.finish","params":{"path":"one","visit":1,"result":{"status":"succeeded","output":' + deep + ',"next":null}}}\\n' +
              JSON.stringify({ v: 1, id: 2, method: "worker.hello", params: { launchId: frame.data.launchId, pid: process.pid } }) + "\\n",
            );
          } else if (frame.id === 1 || frame.id === 2) {
            appendFileSync(${JSON.stringify(replies)}, JSON.stringify(frame) + "\\n");
            seen.add(frame.id);
            if (seen.size === 2) process.exit(0);
          }
        }
      });
    `;
    const c = await open({ workerCommand: [process.execPath, "-e", worker] });
    const flow = await writeWorkflow(
      box,
      "count",
      `import { compute, defineWorkflow } from "piw";
import { z } from "zod";
export default defineWorkflow({
  name: "count",
  input: z.object({}),
  startAt: "one",
  nodes: { one: compute({ run: () => 1 }) },
  edges: { one: { to: "done" } },
});
`,
    );
    const reserved = await c.call("runs.reserve", flow.reserve({}));
    if (reserved.kind !== "applied") throw new Error(JSON.stringify(reserved));
    const read = () =>
      readFileSync(replies, "utf8")
        .split("\n")
        .filter(Boolean)
        .map((line) => JSON.parse(line) as { id: number; error?: { code: string }; result?: unknown });
    const got = await waitFor("both replies", () => {
      try {
        const lines = read();
        return lines.length === 2 ? lines : null;
      } catch {
        return null;
      }
    });
    expect(got.find((r) => r.id === 1)?.error?.code).toBe("frame_too_deep");
    expect(got.find((r) => r.id === 2)?.result).toMatchObject({ command: { type: "start" } });
    // The host is still serving.
    await expect(c.call("host.status", {})).resolves.toMatchObject({ pid: process.pid });
  });
});

/** Workflows whose first node produces a value no frame can carry, with a node after it that must not run. */
const BULKY = `import { compute, defineWorkflow } from "piw";
import { z } from "zod";
export default defineWorkflow({
  name: "bulky",
  input: z.object({ kind: z.enum(["ascii", "multibyte", "deep"]) }),
  startAt: "make",
  nodes: {
    make: compute({
      run: ({ input }) => {
        const { kind } = input as { kind: string };
        if (kind === "ascii") return "x".repeat(${MAX_FRAME_BYTES + 64 * 1024});
        // Under 1 Mi UTF-16 characters, over 1 MiB of UTF-8.
        if (kind === "multibyte") return "é".repeat(600_000);
        let value = [];
        for (let i = 0; i < 3_000; i += 1) value = [value];
        return value;
      },
    }),
    after: compute({ run: () => "ran" }),
  },
  edges: { make: { to: "after" }, after: { to: "done" } },
});
`;

const LOUD = `import { defineWorkflow, shell } from "piw";
import { z } from "zod";
export default defineWorkflow({
  name: "loud",
  input: z.object({}),
  startAt: "print",
  nodes: {
    print: shell({ exec: { shell: "head -c 2097152 /dev/zero | tr '\\\\0' x" } }),
    after: shell({ exec: ["true"] }),
  },
  edges: { print: { to: "after" }, after: { to: "done" } },
});
`;

/** The pid of the worker the host launched for `runId`, from its log line. */
function workerPid(runId: string): number | null {
  for (const line of hostLog) {
    const match = line.match(/^run (\S+): launched worker \S+ \(pid (\d+)\)/);
    if (match && match[1] === runId) return Number(match[2]);
  }
  return null;
}

describe("a node value over the frame limit", () => {
  const cases: Array<[string, string, string, Record<string, string>, string]> = [
    ["a compute output over 1 MiB", "bulky", BULKY, { kind: "ascii" }, "make"],
    [
      "a compute output of multi-byte characters, over 1 MiB only in bytes",
      "bulky",
      BULKY,
      { kind: "multibyte" },
      "make",
    ],
    ["a compute output nested 3,000 deep", "bulky", BULKY, { kind: "deep" }, "make"],
    ["a shell node's stdout of 2 MiB", "loud", LOUD, {}, "print"],
  ];
  it.each(cases)(
    "fails its node and the run with output_too_large, and the worker exits: %s",
    async (_, name, body, input, path) => {
      const c = await open();
      const flow = await writeWorkflow(box, name, body);
      await c.call("runs.subscribe", {});
      const reserved = await c.call("runs.reserve", flow.reserve(input));
      if (reserved.kind !== "applied") throw new Error(JSON.stringify(reserved));
      const { runId } = reserved.value;
      const failed = await c.view(runId, (v) => v.status === "failed", 30_000);
      expect(failed.outcome).toBe("failed");
      expect(failed.error?.code).toBe("output_too_large");
      expect(Buffer.byteLength(failed.error?.message ?? "")).toBeLessThanOrEqual(512);
      expect(failed.error?.message).toContain(path);
      expect(failed.nodes.map((n) => [n.path, n.state])).toEqual([
        [path, "failed"],
        ["after", "pending"],
      ]);
      const pid = workerPid(runId);
      expect(pid, hostLog.join("\n")).not.toBeNull();
      await waitFor("the worker to exit", () => !isAlive(pid as number), 10_000);
      // The host drops the worker from its list when it sees the exit, a moment after the process ends.
      let listed = (await c.call("host.status", {})).workers.filter((w) => w.runId === runId);
      for (let i = 0; i < 250 && listed.length > 0; i++) {
        await new Promise((r) => setTimeout(r, 20));
        listed = (await c.call("host.status", {})).workers.filter((w) => w.runId === runId);
      }
      expect(listed).toEqual([]);
    },
    60_000,
  );
});
