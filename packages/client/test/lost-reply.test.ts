import type { clientMethods, Handlers } from "@piw/protocol";
import { afterEach, describe, expect, it } from "vitest";
import { HostConnection, HostUnavailable } from "../src/index.js";
import { helloResult, sampleView, startTestServer, type TestServer } from "./socket-server.js";

// The server hangs up on chosen requests before replying, as a host that died there would: the
// connection must send again exactly what the protocol marks safe to repeat, and only that.

let server: TestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const never = new Promise<never>(() => {});

/** A server whose `methods` drop the connection (no reply) the first `drops` times they arrive. */
async function droppingServer(drops: number, extra: Partial<Handlers<typeof clientMethods>>) {
  const seen: Array<{ method: string; params: unknown }> = [];
  let dropped = 0;
  const drop = <T>(method: string, params: unknown, reply: () => T): T | Promise<never> => {
    seen.push({ method, params });
    if (dropped < drops) {
      dropped += 1;
      current?.sockets.at(-1)?.destroy();
      return never;
    }
    return reply();
  };
  const current: TestServer = await startTestServer({
    hello: () => helloResult("/state"),
    "runs.reserve": (params) =>
      drop("runs.reserve", params, () => ({ kind: "applied", value: sampleView("hello-1", "queued") })),
    "runs.restart": (params) =>
      drop("runs.restart", params, () => ({ kind: "applied", value: sampleView("hello-2", "queued") })),
    "runs.resume": (params) =>
      drop("runs.resume", params, () => ({ kind: "applied", value: sampleView("hello-1", "starting") })),
    ...extra,
  });
  server = current;
  return { server: current, seen };
}

const reserve = {
  workflowName: "hello",
  source: { kind: "file" as const, path: "/tmp/hello.workflow.ts", sha256: "0".repeat(64) },
  definitionDigest: "d",
  // The host's schema checks the manifest as a compiled graph; this fake host uses the same schemas.
  manifest: sampleView("hello-1", "queued").manifest,
  input: null,
  origin: { kind: "cli" as const },
};

function open(stateDir: string): Promise<HostConnection> {
  return HostConnection.open({
    stateDir,
    client: "test",
    autoStart: false,
    reconnect: { initialDelayMs: 10, maxAttempts: 5 },
  });
}

const keyOf = (entry: { params: unknown } | undefined) =>
  (entry?.params as { requestKey?: string } | undefined)?.requestKey;

describe("a request whose reply was lost with the connection", () => {
  it("sends a run-creating request again with the same request key, and a new call gets a new key", async () => {
    const { server: s, seen } = await droppingServer(1, {});
    const connection = await open(s.stateDir);
    const reserved = await connection.call("runs.reserve", reserve);
    expect(reserved).toMatchObject({ kind: "applied", value: { runId: "hello-1" } });
    expect(seen.map((e) => e.method)).toEqual(["runs.reserve", "runs.reserve"]);
    expect(keyOf(seen[0])).toMatch(/^[0-9a-f]{32}$/);
    expect(keyOf(seen[1])).toBe(keyOf(seen[0]));

    await connection.call("runs.restart", { runId: "hello-1" });
    expect(keyOf(seen[2])).toMatch(/^[0-9a-f]{32}$/);
    expect(keyOf(seen[2])).not.toBe(keyOf(seen[0]));
    connection.close();
  });

  it("keeps a key the caller chose", async () => {
    const { server: s, seen } = await droppingServer(1, {});
    const connection = await open(s.stateDir);
    const requestKey = "ab".repeat(16);
    await connection.call("runs.restart", { runId: "hello-1", requestKey });
    expect(seen.map(keyOf)).toEqual([requestKey, requestKey]);
    connection.close();
  });

  it("tells the caller when the resend lost its reply too", async () => {
    const { server: s, seen } = await droppingServer(2, {});
    const connection = await open(s.stateDir);
    await expect(connection.call("runs.reserve", reserve)).rejects.toBeInstanceOf(HostUnavailable);
    expect(seen.map((e) => e.method)).toEqual(["runs.reserve", "runs.reserve"]);
    connection.close();
  });

  it("does not repeat a request whose repeat could answer differently (a resume)", async () => {
    const { server: s, seen } = await droppingServer(1, {});
    const connection = await open(s.stateDir);
    await expect(connection.call("runs.resume", { runId: "hello-1" })).rejects.toMatchObject({
      reason: "disconnected",
    });
    // The connection itself came back; only the resume was not sent again.
    await expect(connection.call("runs.resume", { runId: "hello-1" })).resolves.toMatchObject({
      kind: "applied",
    });
    expect(seen.map((e) => e.method)).toEqual(["runs.resume", "runs.resume"]);
    connection.close();
  });
});
