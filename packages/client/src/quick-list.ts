import { connect } from "node:net";
import {
  type ClientParams,
  MAX_FRAME_BYTES,
  PROTOCOL_VERSION,
  quickHelloResult,
  quickRunSummaries,
  type RunSummary,
} from "@piw/protocol";
import { hostSocketPath, verifyHostSocketForClient } from "@piw/state-dir";

/** How long the quick route waits for the running host before it gives the full route its turn. */
const QUICK_TIMEOUT_MS = 2_000;

/**
 * `runs.list` on the running host, the quick way: one connection, `hello` and `runs.list` sent
 * together, both replies checked without zod (`quickHelloResult`, `quickRunSummaries`). Resolves
 * with the runs, or with undefined whenever anything is other than plain: no host, a socket that is
 * not this user's, an error reply, a reply the quick check does not take, a slow host. The caller
 * then does what it would have done anyway (the full client, which starts a host and parses every
 * reply with the protocol's schemas). Nothing here starts a host or changes anything.
 */
export function quickListRuns(
  stateDir: string,
  params: ClientParams<"runs.list">,
): Promise<RunSummary[] | undefined> {
  const socketPath = hostSocketPath(stateDir);
  try {
    verifyHostSocketForClient(socketPath);
  } catch {
    return Promise.resolve(undefined);
  }
  return new Promise((resolve) => {
    const socket = connect(socketPath);
    socket.setEncoding("utf8");
    let buffered = "";
    const replies: unknown[] = [];
    const finish = (runs: RunSummary[] | undefined) => {
      clearTimeout(timer);
      socket.destroy();
      resolve(runs);
    };
    const timer = setTimeout(() => finish(undefined), QUICK_TIMEOUT_MS);
    socket.on("error", () => finish(undefined));
    socket.on("close", () => finish(undefined));
    socket.on("connect", () => {
      const hello = { protocol: PROTOCOL_VERSION, client: "cli", pid: process.pid };
      socket.write(`${JSON.stringify({ v: PROTOCOL_VERSION, id: 1, method: "hello", params: hello })}\n`);
      socket.write(`${JSON.stringify({ v: PROTOCOL_VERSION, id: 2, method: "runs.list", params })}\n`);
    });
    socket.on("data", (chunk: string) => {
      buffered += chunk;
      if (buffered.length > 2 * MAX_FRAME_BYTES) return finish(undefined);
      let newline = buffered.indexOf("\n");
      while (newline !== -1) {
        const line = buffered.slice(0, newline);
        buffered = buffered.slice(newline + 1);
        if (Buffer.byteLength(line) > MAX_FRAME_BYTES) return finish(undefined);
        try {
          replies.push(JSON.parse(line));
        } catch {
          return finish(undefined);
        }
        newline = buffered.indexOf("\n");
      }
      if (replies.length < 2) return;
      finish(checkedRuns(replies[0], replies[1]));
    });
  });
}

/** The replies to `hello` (id 1) and `runs.list` (id 2), each a result the quick checks take. */
function checkedRuns(helloReply: unknown, listReply: unknown): RunSummary[] | undefined {
  const result = (reply: unknown, id: number): unknown => {
    if (typeof reply !== "object" || reply === null || Array.isArray(reply)) return undefined;
    const frame = reply as Record<string, unknown>;
    const keys = Object.keys(frame).sort().join(",");
    return frame.v === PROTOCOL_VERSION && frame.id === id && keys === "id,result,v"
      ? frame.result
      : undefined;
  };
  if (quickHelloResult(result(helloReply, 1), PROTOCOL_VERSION) === undefined) return undefined;
  return quickRunSummaries(result(listReply, 2));
}
