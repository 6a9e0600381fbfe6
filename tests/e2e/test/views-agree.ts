import { spawnSync } from "node:child_process";
import { join } from "node:path";
import type { RunView } from "@piw/protocol";
import { ASCII_GLYPHS, renderFooterStatus, renderWidgetLines, runStateWord } from "@piw/viewer";
import { expect } from "vitest";
import { type PiSession, type PiwWorld, REPO, type RpcRecord } from "@piw/test-kit";

// What a person sees of one run in each place, read the way each is read: Pi's footer status and
// widget from the session's UI events (the world must set PIW_ASCII=1, so the widget's glyphs are
// known), `piw status --json`, and the viewer's snapshot and view from `piw view`.

const PIW_CLI = join(REPO, "apps", "piw", "dist", "main.js");
const WIDGET_WIDTH = 100;

/** `piw <args>` from a shell, against the world's host; its stdout. */
export function piw(current: PiwWorld, args: readonly string[]): { code: number | null; stdout: string } {
  const result = spawnSync(process.execPath, [PIW_CLI, ...args], {
    cwd: current.project,
    env: { ...process.env, ...current.env, NO_COLOR: "1" },
    encoding: "utf8",
    timeout: 60_000,
  });
  return { code: result.status, stdout: result.stdout };
}

export function statusJson(current: PiwWorld, runId: string): RunView {
  const { code, stdout } = piw(current, ["status", runId, "--json"]);
  expect(code, stdout).toBe(0);
  return JSON.parse(stdout) as RunView;
}

function lastUi(pi: PiSession, method: "setStatus" | "setWidget"): RpcRecord | undefined {
  return pi.events.filter((e) => e.type === "extension_ui_request" && e.method === method).at(-1);
}

/** Every node as `[path, state]`, sorted by path. */
export const nodeStates = (view: RunView) =>
  view.nodes.map((node) => [node.path, node.state] as const).sort((a, b) => a[0].localeCompare(b[0]));

/**
 * At one stage of the story: `piw status --json` shows the run as expected, Pi's footer status and
 * widget show what the viewer's renderers draw from that same view, and the viewer's snapshot
 * (`piw view --once`) names the same run state. Pi draws pushed views, so it may lag for a moment.
 */
export async function expectViewsAgree(
  current: PiwWorld,
  runId: string,
  stage: string,
  expected: (view: RunView) => boolean,
): Promise<RunView> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const view = statusJson(current, runId);
    const footer = lastUi(current.pi, "setStatus");
    const widget = lastUi(current.pi, "setWidget");
    const agreed =
      expected(view) &&
      footer?.statusText === renderFooterStatus(view) &&
      JSON.stringify(widget?.widgetLines) ===
        JSON.stringify(renderWidgetLines(view, { width: WIDGET_WIDTH, glyphs: ASCII_GLYPHS }));
    if (agreed || Date.now() > deadline) {
      expect(expected(view), `${stage}: piw status --json shows ${view.status}/${view.outcome}`).toBe(true);
      expect(footer?.statusText, `${stage}: Pi's footer status and piw status disagree`).toBe(
        renderFooterStatus(view),
      );
      expect(widget?.widgetLines, `${stage}: Pi's widget and piw status disagree`).toEqual(
        renderWidgetLines(view, { width: WIDGET_WIDTH, glyphs: ASCII_GLYPHS }),
      );
      const snapshot = piw(current, ["view", runId, "--once", "--width", "120"]);
      expect(snapshot.code, snapshot.stdout).toBe(0);
      expect(snapshot.stdout, `${stage}: the viewer's snapshot`).toContain(runStateWord(view));
      const viewerJson = piw(current, ["view", runId, "--json"]);
      const viewed = JSON.parse(viewerJson.stdout) as RunView;
      expect([viewed.status, viewed.outcome, nodeStates(viewed)], `${stage}: the viewer's view`).toEqual([
        view.status,
        view.outcome,
        nodeStates(view),
      ]);
      return view;
    }
    await new Promise((r) => setTimeout(r, 200));
  }
}
