import { connect } from "node:net";
import {
  type ClientMethod,
  type ClientParams,
  MAX_FRAME_BYTES,
  PROTOCOL_VERSION,
  quickHelloResult,
  quickRunSummaries,
  quickRunView,
  type RunSummary,
  type RunView,
} from "@piw/protocol";
import { hostSocketPath, verifyHostSocketForClient } from "@piw/state-dir";

/** How long the quick route waits for the running host before it gives the full route its turn. */
const QUICK_TIMEOUT_MS = 2_000;

/** `runs.list` on the running host, the quick way (see quickCall). */
export function quickListRuns(
  stateDir: string,
  params: ClientParams<"runs.list">,
): Promise<RunSummary[] | undefined> {
  return quickCall(stateDir, "runs.list", params, quickRunSummaries);
}

/** `runs.get` on the running host, the quick way (see quickCall); undefined for a missing run too. */
export function quickGetRun(stateDir: string, runId: string): Promise<RunView | undefined> {
  return quickCall(stateDir, "runs.get", { runId }, quickRunView);
}

/**
 * One call on the running host, the quick way: one connection, `hello` and the call sent together,
 * both replies checked without zod (`quickHelloResult` and `check`). Resolves with the checked
 * result, or with undefined whenever anything is other than plain: no host, a socket that is not
 * this user's, an error reply, a reply the quick check does not take, a slow host. The caller then
 * does what it would have done anyway (the full client, which starts a host and parses every reply
 * with the protocol's schemas). Nothing here starts a host or changes anything.
 */
function quickCall<M extends ClientMethod, T>(
  stateDir: string,
  method: M,
  params: ClientParams<M>,
  check: (result: unknown) => T | undefined,
): Promise<T | undefined> {
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
    const finish = (result: T | undefined) => {
      clearTimeout(timer);
      socket.destroy();
      resolve(result);
    };
    const timer = setTimeout(() => finish(undefined), QUICK_TIMEOUT_MS);
    socket.on("error", () => finish(undefined));
    socket.on("close", () => finish(undefined));
    socket.on("connect", () => {
      const hello = { protocol: PROTOCOL_VERSION, client: "cli", pid: process.pid };
      socket.write(`${JSON.stringify({ v: PROTOCOL_VERSION, id: 1, method: "hello", params: hello })}\n`);
      socket.write(`${JSON.stringify({ v: PROTOCOL_VERSION, id: 2, method, params })}\n`);
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
      finish(checked(replies[0], replies[1], check));
    });
  });
}

/** The replies to `hello` (id 1) and the call (id 2), each a result the quick checks take. */
function checked<T>(
  helloReply: unknown,
  callReply: unknown,
  check: (result: unknown) => T | undefined,
): T | undefined {
  const result = (reply: unknown, id: number): unknown => {
    if (typeof reply !== "object" || reply === null || Array.isArray(reply)) return undefined;
    const frame = reply as Record<string, unknown>;
    const keys = Object.keys(frame).sort().join(",");
    return frame.v === PROTOCOL_VERSION && frame.id === id && keys === "id,result,v"
      ? frame.result
      : undefined;
  };
  if (quickHelloResult(result(helloReply, 1), PROTOCOL_VERSION) === undefined) return undefined;
  return check(result(callReply, 2));
}
