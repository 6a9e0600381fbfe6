import type { ExtensionAPI, ExtensionContext } from "@earendil-works/pi-coding-agent";
import { ACTIVE_STATUSES } from "@piw/protocol";
import { outsideHerdr, parseViewerPlacement, showRunInHerdr, VIEWER_PLACEMENTS } from "./herdr-viewer.js";
import { asWorkflowError, WorkflowError } from "./host-link.js";
import type { SessionBridge } from "./session-bridge.js";

/** The key that opens (or focuses) the current run's viewer beside Pi, as `/piw` does. */
const VIEWER_SHORTCUT = "ctrl+shift+w";

const ABOUT = `Open the current run's viewer in a Herdr pane beside Pi, or focus it: /piw [${VIEWER_PLACEMENTS.join("|")}] (${VIEWER_SHORTCUT})`;

/** `/piw [placement]` and its shortcut: the session's current run in the piw viewer, in Herdr. */
export function registerViewerCommand(
  pi: ExtensionAPI,
  bridge: SessionBridge,
  stateDir: string | undefined,
): void {
  const show = async (args: string, ctx: ExtensionContext) => {
    bridge.remember(ctx);
    const why = outsideHerdr(process.env);
    if (why !== undefined) {
      ctx.ui.notify(why, "warning");
      return;
    }
    try {
      const placement = parseViewerPlacement(args);
      const runId = await sessionRun(bridge);
      const shown = await showRunInHerdr(runId, placement, { env: process.env, cwd: ctx.cwd, stateDir });
      ctx.ui.notify(
        shown.kind === "opened"
          ? `Opened the viewer of run ${runId} in Herdr pane ${shown.paneId}.`
          : `Focused the viewer of run ${runId} (Herdr pane ${shown.paneId}).`,
        "info",
      );
    } catch (error) {
      ctx.ui.notify(asWorkflowError(error).message, "error");
    }
  };
  pi.registerCommand("piw", {
    description: ABOUT,
    getArgumentCompletions: (prefix) =>
      VIEWER_PLACEMENTS.filter((placement) => placement.startsWith(prefix.trim())).map((placement) => ({
        value: placement,
        label: placement,
      })),
    handler: show,
  });
  pi.registerShortcut(VIEWER_SHORTCUT, { description: ABOUT, handler: (ctx) => show("", ctx) });
}

/** The session's current run: its active run, else its latest. */
async function sessionRun(bridge: SessionBridge): Promise<string> {
  const sessionId = bridge.sessionId;
  const [active] = await bridge.host.call("runs.list", {
    sessionId,
    statuses: [...ACTIVE_STATUSES],
    limit: 1,
  });
  const [latest] =
    active === undefined ? await bridge.host.call("runs.list", { sessionId, limit: 1 }) : [active];
  if (latest === undefined) {
    throw new WorkflowError(
      "This Pi session has no workflow runs yet: start one with /workflow <name>, then /piw shows it.",
    );
  }
  return latest.runId;
}
