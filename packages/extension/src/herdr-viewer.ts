import { oneLine } from "@piw/protocol";
import {
  field,
  HERDR_PLUGIN,
  HerdrError,
  herdrPaneLabel,
  herdrPaneOf,
  PIW_ENV,
  readHerdrPlugin,
  runHerdr,
  runHerdrJson,
} from "@piw/state-dir";
import { WorkflowError } from "./host-link.js";

/** Where `/piw` opens the viewer: beside Pi (a split on that side), a new tab, or a new workspace. */
export const VIEWER_PLACEMENTS = ["right", "below", "left", "above", "tab", "workspace"] as const;
export type ViewerPlacement = (typeof VIEWER_PLACEMENTS)[number];

/** What `/piw` did: opened a new viewer pane, or focused the one already showing the run. */
export type ViewerShown = { kind: "opened" | "focused"; paneId: string };

export function parseViewerPlacement(text: string): ViewerPlacement {
  const word = text.trim() === "" ? "right" : text.trim();
  const placement = VIEWER_PLACEMENTS.find((candidate) => candidate === word);
  if (placement === undefined) {
    throw new WorkflowError(`/piw takes one of ${VIEWER_PLACEMENTS.join(", ")} (default right).`);
  }
  return placement;
}

/** Why `/piw` cannot work here, or undefined when Pi runs in a Herdr pane. */
export function outsideHerdr(env: NodeJS.ProcessEnv): string | undefined {
  if (herdrPaneOf(env) !== undefined) return undefined;
  return "/piw opens the run's viewer in a Herdr pane, so Pi must run inside Herdr (HERDR_ENV=1 and HERDR_PANE_ID in its environment). Outside Herdr, run piw view <runId> in another terminal.";
}

/**
 * Show the viewer of `runId` in Herdr: focus the pane already labelled for it, else open the plugin's
 * viewer pane at `placement` and label it. `stateDir` goes to the pane when Pi's piw uses its own
 * (PIW_HOME), so the viewer reads the same host.
 */
export async function showRunInHerdr(
  runId: string,
  placement: ViewerPlacement,
  options: { env: NodeJS.ProcessEnv; cwd: string; stateDir: string | undefined },
): Promise<ViewerShown> {
  const { env } = options;
  const caller = herdrPaneOf(env);
  if (caller === undefined) throw new WorkflowError(outsideHerdr(env) ?? "");
  try {
    const label = herdrPaneLabel(runId);
    const existing = await findPane(label, env);
    if (existing !== undefined) {
      await runHerdr(["plugin", "pane", "focus", existing], env);
      return { kind: "focused", paneId: existing };
    }
    const plugin = await readHerdrPlugin(env);
    if (plugin === undefined || !plugin.enabled) {
      throw new WorkflowError(
        `The piw Herdr plugin is not ${plugin === undefined ? "linked" : "enabled"}: run piw herdr sync in a terminal, then /piw again.`,
      );
    }
    const paneEnv = [
      "--env",
      `${PIW_ENV.herdrRunId.name}=${runId}`,
      ...(options.stateDir === undefined ? [] : ["--env", `${PIW_ENV.home.name}=${options.stateDir}`]),
    ];
    const paneId = await openPane(placement, caller, paneEnv, label, options.cwd, env);
    await runHerdr(["pane", "rename", paneId, label], env);
    return { kind: "opened", paneId };
  } catch (error) {
    if (error instanceof HerdrError) {
      const said = error.detail === "" ? "" : `: ${error.detail}`;
      throw new WorkflowError(`Herdr did not open the viewer (${oneLine(`${error.message}${said}`, 240)}).`);
    }
    throw error;
  }
}

/** The pane whose label is `label`, from `herdr pane list` (every workspace). */
async function findPane(label: string, env: NodeJS.ProcessEnv): Promise<string | undefined> {
  const panes = field(field(await runHerdrJson(["pane", "list"], env), "result"), "panes");
  if (!Array.isArray(panes)) throw new HerdrError("reply", "herdr pane list gave no pane list");
  const found = panes.find((pane) => field(pane, "label") === label);
  const paneId = field(found, "pane_id");
  return typeof paneId === "string" ? paneId : undefined;
}

async function openPane(
  placement: ViewerPlacement,
  caller: string,
  paneEnv: readonly string[],
  label: string,
  cwd: string,
  env: NodeJS.ProcessEnv,
): Promise<string> {
  const open = ["plugin", "pane", "open", "--plugin", HERDR_PLUGIN.id, "--entrypoint", HERDR_PLUGIN.pane];
  switch (placement) {
    case "right":
    case "below":
    case "left":
    case "above": {
      const direction = placement === "right" || placement === "left" ? "right" : "down";
      const where = ["--placement", "split", "--target-pane", caller, "--direction", direction];
      const paneId = openedPane(await runHerdrJson([...open, ...where, ...paneEnv, "--focus"], env));
      // Herdr splits to the right or downwards; the other sides swap the new pane with Pi's.
      if (placement === "left" || placement === "above") {
        await runHerdr(["pane", "swap", "--source-pane", paneId, "--target-pane", caller], env);
      }
      return paneId;
    }
    case "tab": {
      const workspace = field(
        field(field(await runHerdrJson(["pane", "get", caller], env), "result"), "pane"),
        "workspace_id",
      );
      if (typeof workspace !== "string") throw new HerdrError("reply", "herdr pane get gave no workspace");
      return openedPane(
        await runHerdrJson(
          [...open, "--placement", "tab", "--workspace", workspace, ...paneEnv, "--focus"],
          env,
        ),
      );
    }
    case "workspace": {
      const created = field(
        await runHerdrJson(["workspace", "create", "--cwd", cwd, "--label", label, "--focus"], env),
        "result",
      );
      const workspace = field(field(created, "workspace"), "workspace_id");
      const firstTab = field(field(created, "root_pane"), "tab_id");
      if (typeof workspace !== "string" || typeof firstTab !== "string") {
        throw new HerdrError("reply", "herdr workspace create gave no workspace");
      }
      const paneId = openedPane(
        await runHerdrJson(
          [...open, "--placement", "tab", "--workspace", workspace, ...paneEnv, "--focus"],
          env,
        ),
      );
      // The new workspace's own first tab holds only a shell: the viewer's tab replaces it.
      await runHerdr(["tab", "close", firstTab], env);
      return paneId;
    }
    default:
      return placement satisfies never;
  }
}

function openedPane(reply: unknown): string {
  const paneId = field(field(field(field(reply, "result"), "plugin_pane"), "pane"), "pane_id");
  if (typeof paneId !== "string") throw new HerdrError("reply", "herdr plugin pane open gave no pane");
  return paneId;
}
