import type { Socket } from "node:net";
import { clientMethods, type clientPushes, MAX_FRAME_BYTES, type PushData, RpcPeer } from "@piw/protocol";
import { type ClientConnection, type ClientHandlerDeps, clientHandlers } from "./client-handlers.js";
import { describeBug, guardHandlers } from "./host-errors.js";
import type { HostLog } from "./host-log.js";

/** A client that stops reading while this much is queued for it is disconnected, not buffered forever. */
const MAX_QUEUED_BYTES = 16 * 1024 * 1024;

/**
 * Past this backlog, views wait for the socket to drain. A view is a whole snapshot, so only the
 * latest one per subscription is kept: a slow follower of a large run gets fewer views, never a
 * disconnect.
 */
const VIEW_BACKLOG_BYTES = 1024 * 1024;

/** The host's end of one client connection: it serves `clientMethods`, calls nothing, pushes `clientPushes`. */
type ClientPeer = RpcPeer<typeof clientMethods, Record<never, never>, typeof clientPushes>;

/**
 * Serve client protocol v1 on one socket. Nothing a client sends can throw out of here: frames are
 * parsed by the peer, handler failures become typed errors, socket errors only close this connection.
 */
export function serveClient(socket: Socket, deps: ClientHandlerDeps, log: HostLog): void {
  socket.setEncoding("utf8");
  const holder: { peer?: ClientPeer } = {};
  const heldViews = new Map<string, PushData<typeof clientPushes, "run.view">>();
  const conn: ClientConnection = {
    sink: {
      push: (name, data) => {
        if (name === "run.view") {
          heldViews.delete(data.subscriptionId);
          if (socket.writableLength > VIEW_BACKLOG_BYTES) {
            heldViews.set(data.subscriptionId, data);
            return;
          }
        }
        const pushed = holder.peer?.push(name, data);
        if (pushed && !pushed.ok && !holder.peer?.isClosed)
          log(`client: a ${name} push was not sent (${pushed.error.code})`);
      },
    },
    greeted: false,
  };
  socket.on("drain", () => {
    const held = [...heldViews.values()];
    heldViews.clear();
    for (const data of held) holder.peer?.push("run.view", data);
  });
  const peer: ClientPeer = new RpcPeer({
    send: (line) => {
      if (socket.destroyed || !socket.writable) return;
      socket.write(line);
      if (socket.writableLength > MAX_QUEUED_BYTES) {
        log("client: not reading its replies; closing the connection");
        socket.destroy();
      }
    },
    local: {
      methods: clientMethods,
      handlers: guardHandlers(clientHandlers(deps, conn), (method, error) =>
        log(`client: ${method} failed: ${describeBug(error)}`),
      ),
    },
    maxFrameBytes: MAX_FRAME_BYTES,
  });
  holder.peer = peer;
  socket.on("data", (chunk: string) => {
    try {
      peer.feed(chunk);
    } catch (error) {
      log(`client: frame handling failed: ${describeBug(error)}`);
    }
  });
  socket.on("error", () => {
    // A reset or broken pipe ends this connection only; `close` follows.
  });
  socket.on("close", () => {
    peer.close();
    deps.publisher.dropSink(conn.sink);
  });
}
