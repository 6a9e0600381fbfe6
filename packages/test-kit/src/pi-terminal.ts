import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { FakeModel } from "./fake-model.ts";
import { piProcessEnv, writeAgentConfig } from "./pi-agent-dir.ts";
import { PI_BIN } from "./pi-session.ts";

// The real Pi in its interactive terminal UI: tmux runs it, `send-keys` types, `capture-pane` reads
// the screen. Rpc mode draws nothing, so what a user sees in the chat is only testable here.

const quote = (word: string) => `'${word.replaceAll("'", "'\\''")}'`;

export interface PiTerminalOptions {
  model: FakeModel;
  cwd: string;
  extensions: string[];
  env: Record<string, string>;
  columns?: number;
  rows?: number;
}

export class PiTerminal {
  private readonly server = `piw-e2e-pi-${process.pid}-${Math.random().toString(36).slice(2, 8)}`;
  readonly root: string;

  private constructor(root: string) {
    this.root = root;
  }

  static start(options: PiTerminalOptions): PiTerminal {
    const root = mkdtempSync(join(tmpdir(), "piw-e2e-tty-"));
    const home = join(root, "home");
    const agentDir = join(root, "agent");
    mkdirSync(home, { recursive: true });
    writeAgentConfig(agentDir, { model: options.model, settings: { quietStartup: true } });
    const terminal = new PiTerminal(root);
    const env = {
      ...piProcessEnv(home, agentDir),
      LANG: "C.UTF-8",
      TERM: "xterm-256color",
      ...options.env,
    };
    const argv = [PI_BIN, ...options.extensions.flatMap((extension) => ["-e", extension])];
    const command = [
      "exec",
      "env",
      "-i",
      ...Object.entries(env).map(([name, value]) => quote(`${name}=${value}`)),
      ...argv.map(quote),
    ].join(" ");
    terminal.tmux(
      "new-session",
      "-d",
      "-s",
      "pi",
      "-x",
      String(options.columns ?? 120),
      "-y",
      String(options.rows ?? 40),
      "-c",
      options.cwd,
      command,
    );
    return terminal;
  }

  tmux(...args: string[]): string {
    return execFileSync("tmux", ["-L", this.server, ...args], { encoding: "utf8" });
  }

  /** The visible screen, as text (no colours). */
  screen(): string {
    return this.tmux("capture-pane", "-p", "-t", "pi");
  }

  /** Types literal text (no Enter). */
  type(text: string): void {
    this.tmux("send-keys", "-t", "pi", "-l", text);
  }

  /** Presses keys by tmux name (`Enter`, `C-o`, `Escape`). */
  press(...keys: string[]): void {
    this.tmux("send-keys", "-t", "pi", ...keys);
  }

  async waitForScreen(what: string, check: (text: string) => boolean, timeoutMs = 30_000): Promise<string> {
    const deadline = Date.now() + timeoutMs;
    let last = "";
    while (Date.now() < deadline) {
      try {
        last = this.screen();
      } catch (error) {
        throw new Error(`the Pi terminal is gone while waiting for ${what}: ${(error as Error).message}`);
      }
      if (check(last)) return last;
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error(`the screen never showed ${what} within ${timeoutMs} ms; it was:\n${last}`);
  }

  close(): void {
    try {
      this.tmux("kill-server");
    } catch {
      // Already gone.
    }
    rmSync(this.root, { recursive: true, force: true });
  }
}
