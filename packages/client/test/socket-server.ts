import { mkdtempSync } from "node:fs";
import { createServer, type Server, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { clientMethods, type clientPushes, type Handlers, RpcPeer, type RunView } from "@piw/protocol";
import { removeTree } from "@piw/test-kit";

/** The host's end of a test connection: it serves the client methods and pushes `clientPushes`. */
type HostEnd = RpcPeer<typeof clientMethods, Record<never, never>, typeof clientPushes>;

/** A real RpcPeer server on a real Unix socket, serving the handlers a test gives it. */
export interface TestServer {
  stateDir: string;
  socketPath: string;
  /** Every peer that connected, newest last. */
  peers: HostEnd[];
  sockets: Socket[];
  close(): Promise<void>;
}

/**
 * `handlers` may leave methods out: a test server plays the part of the host it needs, and a method it
 * leaves out is answered `unknown_method` like any method a peer does not serve.
 */
export async function startTestServer(
  handlers: Partial<Handlers<typeof clientMethods>>,
): Promise<TestServer> {
  const stateDir = mkdtempSync(join(tmpdir(), "piw-client-"));
  const socketPath = join(stateDir, "host.sock");
  const peers: HostEnd[] = [];
  const sockets: Socket[] = [];
  const server: Server = createServer((socket) => {
    socket.setEncoding("utf8");
    sockets.push(socket);
    const peer: HostEnd = new RpcPeer({
      send: (line) => {
        if (!socket.destroyed) socket.write(line);
      },
      local: { methods: clientMethods, handlers: handlers as Handlers<typeof clientMethods> },
    });
    peers.push(peer);
    socket.on("data", (chunk: string) => peer.feed(chunk));
    socket.on("error", () => {});
    socket.on("close", () => peer.close());
  });
  await new Promise<void>((resolve) => server.listen(socketPath, resolve));
  return {
    stateDir,
    socketPath,
    peers,
    sockets,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      removeTree(stateDir);
    },
  };
}

export const helloResult = (stateDir: string) => ({
  protocol: 1 as const,
  hostPid: process.pid,
  stateDir,
  version: "test",
});

/** A minimal valid run view: a one-node run in the given status. */
export function sampleView(runId: string, status: RunView["status"], revision = 1): RunView {
  return {
    runId,
    workflowName: "hello",
    source: { kind: "file", path: "/tmp/hello.workflow.ts", sha256: "0".repeat(64) },
    title: null,
    status,
    outcome: status === "done" ? "completed" : null,
    origin: { kind: "cli" },
    parentRunId: null,
    rootRunId: runId,
    originCommand: "start",
    restartNumber: 0,
    paused: false,
    recoveryReason: null,
    error: null,
    revision,
    createdAt: 1,
    startedAt: null,
    finishedAt: null,
    currentWork: { kind: "none" },
    cursor: null,
    nodes: [],
    manifest: {
      version: 1,
      workflow: "hello",
      startPath: "greet",
      exits: ["done"],
      maxSteps: 100,
      nodes: [{ path: "greet", name: "greet", scope: "", kind: "compute", title: "greet" }],
      mounts: [],
      edges: [{ from: "greet", to: { kind: "exit", exit: "done" } }],
    },
  };
}
