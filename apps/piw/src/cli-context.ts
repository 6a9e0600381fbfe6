import { connectHost, defaultStateDir, type HostClient, HostConnection, HostUnavailable } from "@piw/client";
import { CliError } from "./cli-error.js";
import { ExitCode } from "./exit-codes.js";
import { resolveHostCommand } from "./host-command.js";
import { colorWanted, createStyle, type Style } from "./style.js";

interface OutputStream {
  write(text: string): unknown;
  isTTY?: boolean;
  /** A terminal's width, where it has one. */
  columns?: number;
}

/** The process around a command: arguments, environment and terminals. Tests pass their own. */
export interface CliIo {
  env: NodeJS.ProcessEnv;
  cwd: string;
  stdout: OutputStream;
  stderr: OutputStream;
  stdin: NodeJS.ReadableStream & { isTTY?: boolean };
}

/** What every command gets: output with styling decided once, and the host connection. */
export class CliContext {
  readonly style: Style;
  readonly stateDir: string;
  private connection: HostConnection | undefined;

  constructor(readonly io: CliIo) {
    this.style = createStyle(colorWanted(io.stdout, io.env));
    this.stateDir = defaultStateDir(io.env);
  }

  get errStyle(): Style {
    return createStyle(colorWanted(this.io.stderr, this.io.env));
  }

  /** Whether a person can answer a question: both the keyboard and the prompt are terminals. */
  get interactive(): boolean {
    return this.io.stdin.isTTY === true && this.io.stderr.isTTY === true;
  }

  print(line = ""): void {
    this.io.stdout.write(`${line}\n`);
  }

  warn(line: string): void {
    this.io.stderr.write(`${line}\n`);
  }

  printJson(value: unknown): void {
    this.print(JSON.stringify(value, null, 2));
  }

  /** The host, started in the background when none runs; reconnects if it restarts. */
  async host(how: { launching?: boolean } = {}): Promise<HostConnection> {
    if (this.connection) return this.connection;
    let hostCommand: string[];
    try {
      hostCommand = resolveHostCommand(this.io.env);
    } catch (error) {
      // No way to start a host: a running one still serves.
      if (!(error instanceof CliError) || error.exitCode === ExitCode.usage) throw error;
      await this.runningHost().then((client) => {
        client?.close();
        if (client === undefined) throw error;
      });
      hostCommand = [];
    }
    this.connection = await HostConnection.open({
      stateDir: this.stateDir,
      client: "cli",
      ...how,
      ...(hostCommand.length > 0 ? { hostCommand } : { autoStart: false }),
    });
    return this.connection;
  }

  /** The running host, or undefined when none answers; never starts one. */
  async runningHost(): Promise<HostClient | undefined> {
    try {
      return await connectHost({ stateDir: this.stateDir, client: "cli", autoStart: false });
    } catch (error) {
      if (error instanceof HostUnavailable && error.reason === "not_running") return undefined;
      throw error;
    }
  }

  close(): void {
    this.connection?.close();
    this.connection = undefined;
  }
}
