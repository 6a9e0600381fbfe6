import { chmodSync, existsSync, mkdirSync, realpathSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { PiSdkLocation } from "../src/pi-sdk-location.js";
import {
  finished,
  type Sandbox,
  sandbox,
  start,
  TestClient,
  TSX_ENV,
  writeWorkflow,
} from "./host-fixture.js";

let box: Sandbox;
let stop: (() => Promise<void>) | undefined;
afterEach(async () => {
  await stop?.();
  stop = undefined;
  box.cleanup();
});

const ISOLATED_FLOW = `import { agent, defineWorkflow } from "piw";
import { z } from "zod";
export default defineWorkflow({
  name: "iso",
  startAt: "check",
  nodes: {
    check: agent({ session: "isolated", prompt: "Check.", output: z.object({ ok: z.boolean() }) }),
  },
  edges: { check: { to: "done" } },
});
`;

/**
 * A folder that looks like Pi's SDK package. Its entry records that it was loaded and exports nothing,
 * so the session it cannot create fails the step: the marker says which SDK the worker imported.
 */
function fakeSdk(dir: string, marker: string): string {
  mkdirSync(join(dir, "dist"), { recursive: true });
  writeFileSync(
    join(dir, "package.json"),
    JSON.stringify({
      name: "@earendil-works/pi-coding-agent",
      exports: { ".": { import: "./dist/index.js" } },
    }),
  );
  writeFileSync(
    join(dir, "dist", "index.js"),
    `import { writeFileSync } from "node:fs";\nwriteFileSync(${JSON.stringify(marker)}, "loaded");\n`,
  );
  return dir;
}

async function runIsolatedStep(reported: string) {
  // No Pi settings of the real user: the worker's Pi (if one loads) finds none and no model.
  const agentDir = join(box.dir, "agent");
  mkdirSync(agentDir, { recursive: true });
  const host = await start(box, { workerEnv: { ...TSX_ENV, PI_CODING_AGENT_DIR: agentDir } });
  stop = () => host.stop();
  const flow = await writeWorkflow(box, "iso", ISOLATED_FLOW);
  const client = await TestClient.connect(host.socketPath, false);
  try {
    await client.call("hello", { protocol: 1, client: "extension", piSdk: reported });
    const reserved = await client.call("runs.reserve", flow.reserve(null));
    if (reserved.kind !== "applied") throw new Error(JSON.stringify(reserved));
    return await finished(client, reserved.value.runId);
  } finally {
    client.close();
  }
}

describe("the Pi SDK folder an extension reports in hello", () => {
  it("is checked and handed to the worker, which imports that SDK for an isolated step", async () => {
    box = sandbox();
    const marker = join(box.dir, "loaded");
    const sdk = fakeSdk(join(realpathSync(box.dir), "pi", "node_modules", "pi-coding-agent"), marker);
    const view = await runIsolatedStep(sdk);
    expect(existsSync(marker)).toBe(true);
    // It loaded, but it is no SDK: the session could not be created (not "the SDK is missing").
    expect(view.error).toEqual({
      code: "node_failed",
      message: "The isolated Pi session of check could not be created.",
    });
  }, 90_000);

  it("is kept only while it passes the check, and each refusal is logged with its reason alone", () => {
    box = sandbox();
    const sdk = fakeSdk(join(realpathSync(box.dir), "pi", "node_modules", "pi-coding-agent"), "/dev/null");
    const lines: string[] = [];
    const location = new PiSdkLocation((line) => lines.push(line));
    location.report(join(box.dir, "nowhere"));
    expect(location.entry()).toBeUndefined();
    location.report(sdk);
    expect(location.entry()).toBe(join(sdk, "dist", "index.js"));
    // Someone else could now change the code it would load: it is forgotten, not handed on.
    chmodSync(join(sdk, "dist", "index.js"), 0o666);
    expect(location.entry()).toBeUndefined();
    chmodSync(join(sdk, "dist", "index.js"), 0o644);
    expect(location.entry()).toBeUndefined();
    expect(lines).toEqual([
      "a Pi client's SDK folder was refused (missing); isolated steps cannot use it",
      "a Pi client reported its SDK folder; workers may load it",
      "the reported Pi SDK folder is no longer usable (open_to_others); it is forgotten",
    ]);
  });
});
