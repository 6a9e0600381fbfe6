import { type ChildProcess, spawn } from "node:child_process";
import { closeSync, openSync, readFileSync } from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";
import { type CallArgs, connectHost, type HostClient } from "@piw/client";
import type { ClientMethod, ClientResult } from "@piw/protocol";

/** The soak's host: the built `piw-host`, a real process, started again after every kill. */
export class SoakHost {
  private current: { process: ChildProcess; pid: number; client: HostClient } | undefined;

  constructor(
    private readonly main: string,
    private readonly stateDir: string,
    private readonly log: string,
  ) {}

  get up(): boolean {
    return this.current !== undefined;
  }

  async start(): Promise<void> {
    const fd = openSync(this.log, "a");
    const env: NodeJS.ProcessEnv = { ...process.env, PIW_HOME: this.stateDir };
    delete env.PIW_WORKER_COMMAND;
    const child = spawn(process.execPath, [this.main], { stdio: ["ignore", fd, fd], env });
    closeSync(fd);
    if (child.pid === undefined) throw new Error(`could not start ${this.main}`);
    const deadline = Date.now() + 20_000;
    for (;;) {
      let client: HostClient | undefined;
      try {
        client = await connectHost({ stateDir: this.stateDir, client: "test", autoStart: false });
        const status = await client.call("host.status");
        if (status.pid !== child.pid) throw new Error(`host ${status.pid} answered, expected ${child.pid}`);
        client.on("disconnect", () => {});
        this.current = { process: child, pid: child.pid, client };
        return;
      } catch (error) {
        client?.close();
        if (child.exitCode !== null || Date.now() > deadline) {
          throw new Error(`the host did not come up: ${String(error)}\n${tail(this.log)}`);
        }
        await sleep(50);
      }
    }
  }

  async kill(): Promise<void> {
    const current = this.current;
    if (current === undefined) return;
    this.current = undefined;
    current.client.close();
    const exited = new Promise<void>((done) => {
      if (current.process.exitCode !== null || current.process.signalCode !== null) done();
      else current.process.once("exit", () => done());
    });
    current.process.kill("SIGKILL");
    await exited;
  }

  /** A call to the current host; `undefined` when the host is down or went away during the call. */
  async call<M extends ClientMethod>(method: M, ...args: CallArgs<M>): Promise<ClientResult<M> | undefined> {
    const current = this.current;
    if (current === undefined) return undefined;
    try {
      return await current.client.call(method, ...args);
    } catch {
      return undefined;
    }
  }
}

function tail(file: string): string {
  try {
    return readFileSync(file, "utf8").split("\n").slice(-30).join("\n");
  } catch {
    return "";
  }
}
