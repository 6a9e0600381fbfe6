import { createHash } from "node:crypto";
import { canonicalJson } from "@piw/protocol";

export function sha256(text: string): string {
  return createHash("sha256").update(text).digest("hex");
}

/** The fingerprint of a request: equal requests compare equal, whatever their key order. */
export function fingerprint(value: unknown): string {
  return sha256(canonicalJson(value));
}
