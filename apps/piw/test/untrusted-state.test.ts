import { chmodSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { example, makeHome, piw } from "./cli-harness.js";
import { removeTree } from "@piw/test-kit";

// `piw run` talks to whatever host.sock it finds only when the user alone could have put it there.
// Before, with a state folder others could write, it sent `hello` and then `runs.reserve` with the
// run's input to a socket anyone could have bound.

let home: string | undefined;
let server: Server | undefined;
afterEach(async () => {
  await new Promise<void>((res) => (server ? server.close(() => res()) : res()));
  server = undefined;
  if (home) removeTree(home);
  home = undefined;
});

describe("piw and a state folder it cannot trust", () => {
  it("refuses before it sends anything, says why, and exits 69", async () => {
    home = makeHome();
    chmodSync(home, 0o777);
    const received: string[] = [];
    server = createServer((socket) => {
      received.push("connection");
      socket.setEncoding("utf8").on("data", (chunk: string) => received.push(chunk));
    });
    const socketPath = join(home, "host.sock");
    await new Promise<void>((res) => server?.listen(socketPath, res));
    const result = await piw(home, ["run", example("hello"), "a secret task"]);
    expect(result.code).toBe(69);
    expect(result.stderr).toContain(
      `refusing to connect: ${home} (the state directory) is writable by other users`,
    );
    expect(result.stderr).not.toContain("a secret task");
    expect(received).toEqual([]);
  });
});
