import type { ExtensionAPI, ExtensionContext } from "@earendil-works/pi-coding-agent";

/** Pi as the bridge needs it in tests that play Pi themselves: an idle session with this ID, no UI. */
export function fakePi(sessionId: string): { pi: ExtensionAPI; ctx: ExtensionContext } {
  const pi = { sendMessage() {} } as unknown as ExtensionAPI;
  const ctx = {
    sessionManager: { getSessionId: () => sessionId, getEntries: () => [] },
    isIdle: () => true,
    hasPendingMessages: () => false,
    ui: { setWidget() {}, setStatus() {} },
  } as unknown as ExtensionContext;
  return { pi, ctx };
}
