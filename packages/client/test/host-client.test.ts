import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { RpcError, type RunView } from "@piw/protocol";
import { afterEach, describe, expect, it } from "vitest";
import { connectHost, defaultStateDir, HostClient, HostConnection, HostUnavailable } from "../src/index.js";
import { helloResult, sampleView, startTestServer, type TestServer } from "./socket-server.js";
import { removeTree } from "@piw/test-kit";

let server: TestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

describe("defaultStateDir", () => {
  it("uses PIW_HOME, else ~/.pi/agent/workflows", () => {
    expect(defaultStateDir({ PIW_HOME: "/tmp/x" })).toBe("/tmp/x");
    expect(defaultStateDir({})).toMatch(/\.pi\/agent\/workflows$/);
  });
});

describe("HostClient against a real socket", () => {
  it("says hello with protocol 1, its kind and pid, and keeps the host's answer", async () => {
    const seen: unknown[] = [];
    server = await startTestServer({
      hello: (params) => {
        seen.push(params);
        return helloResult("/state");
      },
    });
    const client = await connectHost({ stateDir: server.stateDir, client: "test" });
    expect(seen).toEqual([{ protocol: 1, client: "test", pid: process.pid }]);
    expect(client.hello).toMatchObject({ protocol: 1, hostPid: process.pid, stateDir: "/state" });
    client.close();
  });

  it("makes typed calls whose results are parsed by the protocol schema", async () => {
    server = await startTestServer({
      hello: () => helloResult("/state"),
      "runs.list": ({ statuses }) => (statuses?.includes("done") ? [sampleView("hello-1", "done")] : []),
      "runs.get": () => ({ not: "a view" }) as never,
    });
    const client = await connectHost({ stateDir: server.stateDir, client: "test" });
    const runs = await client.call("runs.list", { statuses: ["done"] });
    expect(runs.map((r) => r.runId)).toEqual(["hello-1"]);
    expect(runs[0]).not.toHaveProperty("nodes");
    // A reply that breaks the schema is a typed error, not a value of the wrong shape.
    const bad = await client.call("runs.get", { runId: "hello-1" }).catch((e: unknown) => e);
    expect(bad).toBeInstanceOf(RpcError);
    expect((bad as RpcError).code).toBe("bad_frame");
    client.close();
  });

  it("surfaces the host's protocol errors as RpcError with their code", async () => {
    server = await startTestServer({
      hello: () => helloResult("/state"),
      "runs.cancel": () => {
        throw new RpcError("not_found", "No run nope-1.");
      },
    });
    const client = await connectHost({ stateDir: server.stateDir, client: "test" });
    const error = await client.call("runs.cancel", { runId: "nope-1" }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RpcError);
    expect(error).toMatchObject({ code: "not_found", message: "No run nope-1." });
    // Params the protocol refuses are refused by the host too, with invalid_params.
    const invalid = await client.call("runs.cancel", { runId: "bad id" }).catch((e: unknown) => e);
    expect(invalid).toMatchObject({ code: "invalid_params" });
    // An unserved method is unknown_method.
    const unknown = await client.call("runs.pause", { runId: "x" }).catch((e: unknown) => e);
    expect(unknown).toMatchObject({ code: "unknown_method" });
    client.close();
  });

  it("refuses a host that speaks another protocol with RpcError protocol_mismatch", async () => {
    server = await startTestServer({
      hello: () => {
        throw new RpcError("protocol_mismatch", "This host speaks protocol 2.");
      },
    });
    const error = await connectHost({ stateDir: server.stateDir, client: "test" }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RpcError);
    expect(error).toMatchObject({ code: "protocol_mismatch" });
  });

  it("routes pushed views to their subscription, even a push that overtakes the subscribe reply", async () => {
    server = await startTestServer({
      hello: () => helloResult("/state"),
      "runs.subscribe": ({ runId }) => {
        const peer = server?.peers.at(-1);
        const subscriptionId = `sub-${runId}`;
        // Pushed in the same tick as the reply: the client must not drop it.
        queueMicrotask(() => {
          peer?.push("run.view", { subscriptionId, view: sampleView(runId ?? "x", "running", 2) });
          peer?.push("run.view", { subscriptionId: "sub-other", view: sampleView("other-1", "running") });
          // A view the schema refuses: past the typed push, as a host bug would send it.
          server?.sockets
            .at(-1)
            ?.write(
              `${JSON.stringify({ v: 1, push: "run.view", data: { subscriptionId, view: { broken: true } } })}\n`,
            );
        });
        return { subscriptionId };
      },
      "runs.unsubscribe": () => ({ ok: true as const }),
    });
    const client = await connectHost({ stateDir: server.stateDir, client: "test" });
    const views: RunView[] = [];
    const unsubscribe = await client.subscribe("hello-1", (view) => views.push(view));
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(views.map((v) => [v.runId, v.revision])).toEqual([["hello-1", 2]]);
    server.peers
      .at(-1)
      ?.push("run.view", { subscriptionId: "sub-hello-1", view: sampleView("hello-1", "done", 3) });
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(views.map((v) => v.status)).toEqual(["running", "done"]);
    await unsubscribe();
    server.peers
      .at(-1)
      ?.push("run.view", { subscriptionId: "sub-hello-1", view: sampleView("hello-1", "done", 4) });
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(views).toHaveLength(2);
    client.close();
  });

  it("drops a pushed view its schema refuses, names it in invalidPush on the client and its connection, and keeps serving", async () => {
    server = await startTestServer({
      hello: () => helloResult("/state"),
      "runs.subscribe": () => ({ subscriptionId: "sub-1" }),
      "runs.get": () => sampleView("hello-1", "running", 1),
    });
    const connection = await HostConnection.open({
      stateDir: server.stateDir,
      client: "test",
      autoStart: false,
    });
    const client = await connection.client();
    const dropped: { on: string; push: string }[] = [];
    client.on("invalidPush", (push) => dropped.push({ on: "client", push }));
    connection.on("invalidPush", (push) => dropped.push({ on: "connection", push }));
    const views: RunView[] = [];
    await connection.subscribe("hello-1", (view) => views.push(view));
    const raw = (data: unknown) =>
      server?.sockets.at(-1)?.write(`${JSON.stringify({ v: 1, push: "run.view", data })}\n`);
    raw({ subscriptionId: "sub-1", view: { ...sampleView("hello-1", "running", 2), status: "exploded" } });
    raw({ subscriptionId: "sub-1" });
    // A push this side does not know is a newer host's: ignored, not reported.
    server.sockets.at(-1)?.write(`${JSON.stringify({ v: 1, push: "run.future", data: {} })}\n`);
    server.peers
      .at(-1)
      ?.push("run.view", { subscriptionId: "sub-1", view: sampleView("hello-1", "done", 3) });
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(views.map((v) => [v.revision, v.status])).toEqual([
      [1, "running"],
      [3, "done"],
    ]);
    for (const on of ["client", "connection"]) {
      expect(dropped.filter((d) => d.on === on).map((d) => d.push)).toEqual(["run.view", "run.view"]);
    }
    expect(await connection.call("runs.get", { runId: "hello-1" })).toMatchObject({ revision: 1 });
    connection.close();
  });

  it("reports a disconnect when the host goes away, and fails pending and later calls with HostUnavailable", async () => {
    server = await startTestServer({
      hello: () => helloResult("/state"),
      "runs.get": () => new Promise(() => {}),
    });
    const client = await connectHost({ stateDir: server.stateDir, client: "test" });
    const disconnected = new Promise<HostUnavailable>((resolve) => client.once("disconnect", resolve));
    const pending = client.call("runs.get", { runId: "hello-1" }).catch((e: unknown) => e);
    await new Promise((resolve) => setTimeout(resolve, 20));
    for (const socket of server.sockets) socket.destroy();
    expect(await disconnected).toMatchObject({ reason: "disconnected" });
    expect(await pending).toBeInstanceOf(HostUnavailable);
    await expect(client.call("runs.get", { runId: "hello-1" })).rejects.toBeInstanceOf(HostUnavailable);
    expect(client.closed).toBe(true);
  });

  it("emits no disconnect when the caller closes", async () => {
    server = await startTestServer({ hello: () => helloResult("/state") });
    const client = await HostClient.open(server.socketPath, { client: "test" });
    let events = 0;
    client.on("disconnect", () => {
      events += 1;
    });
    client.close();
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(events).toBe(0);
  });
});

describe("connectHost without a host", () => {
  it("fails with HostUnavailable naming the socket when nothing listens and auto-start is off", async () => {
    const stateDir = mkdtempSync(join(tmpdir(), "piw-client-"));
    try {
      const error = await connectHost({ stateDir, client: "test", autoStart: false }).catch(
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(HostUnavailable);
      expect(error).toMatchObject({ reason: "not_running", socketPath: join(stateDir, "host.sock") });
      expect((error as Error).message).toContain(join(stateDir, "host.sock"));
    } finally {
      removeTree(stateDir);
    }
  });

  it("reports a host command that cannot start, quickly and without waiting out the timeout", async () => {
    const stateDir = mkdtempSync(join(tmpdir(), "piw-client-"));
    try {
      const started = Date.now();
      const error = await connectHost({
        stateDir,
        client: "test",
        hostCommand: [process.execPath, "-e", "process.exit(3)"],
        timeoutMs: 10_000,
      }).catch((e: unknown) => e);
      expect(error).toMatchObject({ reason: "start_failed" });
      expect((error as Error).message).toContain("code 3");
      expect(Date.now() - started).toBeLessThan(5_000);
      const missing = await connectHost({
        stateDir,
        client: "test",
        hostCommand: [join(stateDir, "no-such-host")],
      }).catch((e: unknown) => e);
      expect(missing).toMatchObject({ reason: "start_failed" });
    } finally {
      removeTree(stateDir);
    }
  });
});
