import { randomBytes } from "node:crypto";
import {
  type ClientMethod,
  type ClientParams,
  type KeyedMethod,
  lostReplyPolicy,
  type RequestKey,
} from "@piw/protocol";

/** A fresh key for one user action that creates a run: 128 random bits. */
export function newRequestKey(): RequestKey {
  return randomBytes(16).toString("hex");
}

/**
 * Params as the client's `call` takes them: a creating method's `requestKey` may be left out, and
 * then the call chooses one and keeps it for every send of that call.
 */
export type CallParams<M extends ClientMethod> = M extends KeyedMethod
  ? Omit<ClientParams<M>, "requestKey"> & { requestKey?: RequestKey }
  : ClientParams<M>;

/** The params to send: a creating method gets its request key now, once for all its sends. */
export function withRequestKey<M extends ClientMethod>(
  method: M,
  params: CallParams<M> | undefined,
): ClientParams<M> | undefined {
  if (lostReplyPolicy[method] !== "keyed") return params as ClientParams<M> | undefined;
  const given = params as { requestKey?: RequestKey } | undefined;
  return { ...given, requestKey: given?.requestKey ?? newRequestKey() } as ClientParams<M>;
}
