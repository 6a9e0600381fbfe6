import { frameBatch, type MethodTable, RpcPeer, workerMethods } from "@piw/protocol";
import type { HostPeer } from "./host-run-port.js";

export interface StdioChannelOptions {
  onPush(push: string, data: unknown): void;
  /** The host's end went away (stdin ended, stdout broke). Called at most once, with nothing sent after. */
  onLost(): void;
}

/**
 * The host channel over this process's stdio: frames in on stdin, frames out on stdout. Workflow code
 * runs in this process too, so `process.stdout.write` is pointed at stderr: a stray `console.log` must
 * never land between two frames. Only the channel keeps the real stdout.
 */
export function openStdioChannel(options: StdioChannelOptions): HostPeer {
  const { stdin, stdout, stderr } = process;
  const writeFrame = stdout.write.bind(stdout);
  stdout.write = stderr.write.bind(stderr) as typeof stdout.write;

  let lost = false;
  // A burst of pure nodes sends an advance per node: the frames of one turn leave in one write.
  const frames = frameBatch((text) => {
    if (!lost) writeFrame(text);
  });
  const peer = new RpcPeer<MethodTable, typeof workerMethods>({
    send: (line) => frames.send(line),
    remote: workerMethods,
    onPush: (push, data) => options.onPush(push, data),
  });
  const lose = () => {
    if (lost) return;
    lost = true;
    peer.close("The host channel closed.");
    options.onLost();
  };
  // EPIPE arrives here: the host closed its reading end.
  stdout.on("error", lose);
  stdin.setEncoding("utf8");
  stdin.on("data", (chunk: string) => peer.feed(chunk));
  stdin.on("end", lose);
  stdin.on("close", lose);
  stdin.on("error", lose);
  return peer;
}
