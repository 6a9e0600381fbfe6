import { describe, expect, it } from "vitest";
import { createPiAgentSessions, loadPiSdk, PiSdkMissing } from "../src/index.js";

// Each test file runs in its own process, so nothing here has loaded Pi's SDK before.
describe("an isolated step where Pi's SDK cannot be loaded", () => {
  it("is refused with a clear, bounded error that says what to install, and no Pi is loaded", async () => {
    const env = { PIW_PI_SDK: "/nonexistent/pi-coding-agent" };
    await expect(loadPiSdk(env)).rejects.toBeInstanceOf(PiSdkMissing);
    const opened = await createPiAgentSessions({ env }).open({
      runId: "r",
      path: "review",
      visit: 1,
      attempt: 1,
      outputSchema: { type: "string" },
      tools: ["read"],
      cwd: "/",
    });
    expect(opened).toEqual({
      ok: false,
      error: {
        code: "pi_sdk_missing",
        message:
          "Isolated agent steps need Pi's SDK (@earendil-works/pi-coding-agent 1.6 or newer), which could not be loaded: " +
          "start the run from a Pi that has piw installed, install the SDK beside piw " +
          "(npm i -g @earendil-works/pi-coding-agent), or set PIW_PI_SDK to its folder.",
      },
    });
  });
});
