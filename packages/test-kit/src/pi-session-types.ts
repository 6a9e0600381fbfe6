import type { FakeModel } from "./fake-model.ts";

// The records of `pi --mode rpc` on its stdin and stdout, and the Pi session driver's options.

/** Any stdout record from `pi --mode rpc`: a response, a session event or an extension UI request. */
export interface RpcRecord {
  type: string;
  [key: string]: unknown;
}

export interface RpcResponse extends RpcRecord {
  type: "response";
  command: string;
  success: boolean;
  id?: string;
  data?: unknown;
  error?: string;
}

/** A command on stdin; the session adds a unique `id`. */
export interface RpcCommand {
  type: string;
  [key: string]: unknown;
}

export interface WaitOptions {
  timeoutMs?: number;
  /** Search from this event index instead of the session's read cursor. */
  since?: number;
}

export interface PiSessionOptions {
  model: FakeModel;
  /** Project directory Pi runs in; a fresh temp dir when omitted. */
  cwd?: string;
  /** Each becomes `-e <path>`: a `.ts`/`.js` file, a directory or a package path. */
  extensions?: string[];
  /** Extra environment, e.g. `PIW_HOME`, `PIW_WORKER_COMMAND`. */
  env?: Record<string, string>;
  /** Extra CLI arguments after `--mode rpc`. */
  args?: string[];
  /** Merged over the default agent `settings.json`. */
  settings?: Record<string, unknown>;
  /** How long to wait for Pi to answer its first `get_state` (default 30 s). */
  startupTimeoutMs?: number;
}
