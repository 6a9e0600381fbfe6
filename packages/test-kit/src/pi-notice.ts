import type { RpcRecord } from "./pi-session-types.ts";

/** Matches a notice the extension shows in Pi (`ctx.ui.notify`) whose text contains `needle`. */
export function isNotice(needle: string): (event: RpcRecord) => boolean {
  return (event) =>
    event.type === "extension_ui_request" &&
    event.method === "notify" &&
    String(event.message).includes(needle);
}
