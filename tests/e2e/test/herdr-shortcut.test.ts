import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import {
  installHerdrStandIn,
  PI_PACKAGE,
  PiTerminal,
  piwEnv,
  removeTree,
  startFakeModel,
  stopHost,
} from "@piw/test-kit";

const SUM = `import { compute, defineWorkflow } from "piw";

export default defineWorkflow({
  name: "sum",
  startAt: "add",
  nodes: { add: compute({ run: () => 3 }) },
  edges: { add: { to: "done" } },
});
`;

// Ctrl+Shift+W as a terminal with the kitty keyboard protocol sends it: CSI 119 ; 6 u ('w', ctrl+shift).
const CTRL_SHIFT_W = "\u001b[119;6u";

const cleanup: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const step of cleanup.splice(0).reverse()) await step();
});

describe("the /piw key in Pi's terminal inside Herdr (the stand-in herdr)", () => {
  it("Ctrl+Shift+W opens the current run's viewer beside Pi", async () => {
    const root = mkdtempSync(join(tmpdir(), "piw-e2e-herdr-key-"));
    const stateDir = join(root, "state");
    const project = join(root, "project");
    mkdirSync(join(project, ".pi", "workflows"), { recursive: true });
    writeFileSync(join(project, ".pi", "workflows", "sum.workflow.ts"), SUM);
    const model = await startFakeModel();
    cleanup.push(async () => {
      await model.close();
      removeTree(root);
    });
    const herdr = installHerdrStandIn(join(root, "herdr"));
    execFileSync("herdr", ["plugin", "link", PI_PACKAGE], { env: { ...process.env, ...herdr.env } });
    const terminal = PiTerminal.start({
      model,
      cwd: project,
      extensions: [PI_PACKAGE],
      env: { ...piwEnv(stateDir), ...herdr.env, HERDR_ENV: "1", HERDR_PANE_ID: "1-1" },
    });
    cleanup.push(async () => {
      terminal.close();
      await stopHost(stateDir);
    });
    await terminal.waitForScreen("Pi's editor", (screen) => screen.includes("fake"), 60_000);
    terminal.type("/workflow sum");
    terminal.press("Enter");
    const queued = await terminal.waitForScreen("the queued run", (screen) =>
      /queued \(run \S+\)/.test(screen),
    );
    const runId = /queued \(run ([^)\s]+)\)/.exec(queued)?.[1] ?? "";
    expect(runId).not.toBe("");

    terminal.type(CTRL_SHIFT_W);
    await terminal.waitForScreen("the opened notice", (screen) =>
      screen.includes(`Opened the viewer of run ${runId}`),
    );
    const viewer = herdr.state().panes.find((pane) => pane.label === `piw ${runId}`);
    expect(viewer?.env.PIW_HERDR_RUN_ID).toBe(runId);
    expect(herdr.calls().find((args) => args.slice(0, 3).join(" ") === "plugin pane open")).toContain(
      "right",
    );
  }, 120_000);
});
