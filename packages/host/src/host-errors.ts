import { RpcError } from "@piw/protocol";
import { StoreError } from "@piw/store";

/** Another live host holds the state directory's lock: there is one host per user. */
export class HostAlreadyRunning extends Error {
  override readonly name = "HostAlreadyRunning";
  constructor(readonly pid: number) {
    super(`A piw host is already running (pid ${pid}).`);
  }
}

/**
 * The one normalizer at the host's RPC boundary: store failures become typed protocol errors whose
 * messages were already written to be safe; anything else is a bug and says only `internal`.
 */
function toRpcError(error: unknown): RpcError {
  if (error instanceof RpcError) return error;
  if (error instanceof StoreError) {
    switch (error.code) {
      case "invalid_record":
      case "payload_too_large":
        return new RpcError("invalid_params", error.message);
      case "not_found":
        return new RpcError("not_found", error.message);
      case "answer_invalid":
        return new RpcError("answer_invalid", error.message);
      case "answer_refused":
        return new RpcError("refused", error.message);
      case "store_busy":
      case "store_failed":
      case "store_closed":
      case "layout_mismatch":
      case "not_a_database":
      case "insecure_path":
        return new RpcError("store_unavailable", error.message);
      case "wrong_media_type":
      case "illegal_transition":
        return new RpcError("internal", error.message);
      default:
        return error.code satisfies never;
    }
  }
  return new RpcError("internal", "The host failed to handle the request; see the host log.");
}

/** Wrap every handler so that a throw leaves as a typed RpcError (and is logged when it is a bug). */
export function guardHandlers<H extends Record<string, (params: never) => unknown>>(
  handlers: H,
  onBug: (method: string, error: unknown) => void,
): H {
  const guarded: Record<string, (params: never) => Promise<unknown>> = {};
  for (const [method, handler] of Object.entries(handlers)) {
    guarded[method] = async (params: never) => {
      try {
        return await handler(params);
      } catch (error) {
        const rpc = toRpcError(error);
        if (rpc.code === "internal" && !(error instanceof RpcError)) onBug(method, error);
        throw rpc;
      }
    };
  }
  return guarded as unknown as H;
}

/** A bug's name and first words, for the local host log only; never sent to a peer or saved. */
export function describeBug(error: unknown): string {
  if (error instanceof Error) return `${error.name}: ${error.message}`.slice(0, 300);
  return String(error).slice(0, 300);
}
