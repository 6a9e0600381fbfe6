import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import {
  type HerdrStandIn,
  installHerdrStandIn,
  isNotice,
  PI_PACKAGE,
  type PiwWorld,
  startPiwWorld,
} from "@piw/test-kit";

// Settles at once: the session's latest run is the one /piw shows.
const SUM = `import { compute, defineWorkflow } from "piw";

export default defineWorkflow({
  name: "sum",
  startAt: "add",
  nodes: { add: compute({ run: () => 3 }) },
  edges: { add: { to: "done" } },
});
`;

let world: PiwWorld | undefined;
let scratch: string | undefined;
/** The tmux server in which the stand-in runs the panes it opens, when a test asks for it. */
let tmuxServer: string | undefined;
const tmux = (...args: string[]) =>
  execFileSync("tmux", ["-L", tmuxServer ?? "none", ...args], { encoding: "utf8" });
afterEach(async () => {
  if (tmuxServer !== undefined) tmux("kill-server");
  tmuxServer = undefined;
  await world?.close();
  world = undefined;
  if (scratch !== undefined) rmSync(scratch, { recursive: true, force: true });
  scratch = undefined;
});

async function slash(command: string, expected: string): Promise<string> {
  if (world === undefined) throw new Error("no world");
  const since = world.pi.mark();
  await world.pi.prompt(command);
  const notice = await world.pi.waitForEvent(isNotice(expected), { since, timeoutMs: 30_000 });
  return String(notice.message);
}

/** A world whose Pi runs in the stand-in's pane 1-1 (Herdr's variables set, its `herdr` on PATH). */
async function startInHerdr(panes?: string): Promise<{ herdr: HerdrStandIn; inHerdr: PiwWorld }> {
  scratch = mkdtempSync(join(tmpdir(), "piw-e2e-herdr-"));
  const herdr = installHerdrStandIn(scratch);
  world = await startPiwWorld({
    workflows: { sum: SUM },
    env: {
      ...herdr.env,
      HERDR_ENV: "1",
      HERDR_PANE_ID: "1-1",
      ...(panes === undefined ? {} : { HERDR_STAND_IN_TMUX: panes }),
    },
  });
  return { herdr, inHerdr: world };
}

/** The tmux window's screen once `ready` accepts it (within 20 s). */
async function waitForScreen(target: string, ready: (text: string) => boolean): Promise<string> {
  const deadline = Date.now() + 20_000;
  let text = "";
  while (Date.now() < deadline) {
    text = tmux("capture-pane", "-p", "-t", target);
    if (ready(text)) return text;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(`the pane never showed what was expected; it shows:\n${text}`);
}

const opens = (herdr: HerdrStandIn) =>
  herdr.calls().filter((args) => args.slice(0, 3).join(" ") === "plugin pane open");

describe("/piw in a real Pi session inside Herdr (the stand-in herdr)", () => {
  it("opens the current run's viewer in a plugin pane beside Pi, then focuses that pane instead of opening another", async () => {
    tmuxServer = `piw-e2e-herdr-${process.pid}`;
    tmux("new-session", "-d", "-s", "herdr", "-x", "120", "-y", "40");
    tmux("set-option", "-g", "remain-on-exit", "on");
    const { herdr, inHerdr } = await startInHerdr(tmuxServer);

    const queued = await slash("/workflow sum", "queued (run");
    const runId = /\(run ([^)]+)\)/.exec(queued)?.[1] as string;
    expect(runId).toBeDefined();
    await inHerdr.waitForRun(runId, (view) => view.status === "done", 30_000);

    // Not linked yet: /piw says how to link it and opens nothing.
    expect(await slash("/piw", "Herdr plugin is not linked")).toContain("run piw herdr sync");
    expect(opens(herdr)).toEqual([]);

    execFileSync("herdr", ["plugin", "link", PI_PACKAGE], { env: { ...process.env, ...herdr.env } });
    const opened = await slash("/piw", "Opened the viewer of run");
    const viewer = herdr.state().panes.find((pane) => pane.label === `piw ${runId}`);
    expect(viewer).toBeDefined();
    expect(opened).toBe(`Opened the viewer of run ${runId} in Herdr pane ${viewer?.pane_id}.`);
    expect(viewer?.env).toEqual({ PIW_HERDR_RUN_ID: runId, PIW_HOME: inHerdr.stateDir });
    expect(viewer?.tab_id).toBe("1:1");
    expect(opens(herdr)).toEqual([
      [
        ...["plugin", "pane", "open", "--plugin", "piw", "--entrypoint", "viewer"],
        ...["--placement", "split", "--target-pane", "1-1", "--direction", "right"],
        ...["--env", `PIW_HERDR_RUN_ID=${runId}`, "--env", `PIW_HOME=${inHerdr.stateDir}`, "--focus"],
      ],
    ]);

    // The pane's program (the manifest's command, run from the package root) is the viewer on the run.
    const screen = await waitForScreen(
      `herdr:pane-${viewer?.pane_id}`,
      (text) => text.includes(runId) && text.includes("completed") && /\badd\b/.test(text),
    );
    expect(screen).toContain("sum");

    const focused = await slash("/piw below", "Focused the viewer of run");
    expect(focused).toBe(`Focused the viewer of run ${runId} (Herdr pane ${viewer?.pane_id}).`);
    expect(opens(herdr)).toHaveLength(1);
    expect(herdr.calls().at(-1)).toEqual(["plugin", "pane", "focus", viewer?.pane_id]);
    expect(herdr.state().focused).toBe(viewer?.pane_id);

    expect(await slash("/piw sideways", "/piw takes one of")).toContain(
      "right, below, left, above, tab, workspace",
    );
    inHerdr.model.assertNoErrors();
  }, 120_000);

  it("opens it left of Pi by swapping the new split with Pi's pane, and in a new workspace", async () => {
    const { herdr, inHerdr } = await startInHerdr();
    execFileSync("herdr", ["plugin", "link", PI_PACKAGE], { env: { ...process.env, ...herdr.env } });
    const queued = await slash("/workflow sum", "queued (run");
    const runId = /\(run ([^)]+)\)/.exec(queued)?.[1] as string;
    await inHerdr.waitForRun(runId, (view) => view.status === "done", 30_000);

    await slash("/piw left", "Opened the viewer of run");
    const viewer = herdr.state().panes.find((pane) => pane.label === `piw ${runId}`);
    expect(herdr.calls().at(-2)).toEqual([
      "pane",
      "swap",
      "--source-pane",
      viewer?.pane_id,
      "--target-pane",
      "1-1",
    ]);
    expect(herdr.state().panes.map((pane) => pane.pane_id)).toEqual([viewer?.pane_id, "1-1"]);

    // Closing its tab closes the viewer; the next /piw opens a new one, here in a workspace of its own.
    execFileSync("herdr", ["tab", "close", "1:1"], { env: { ...process.env, ...herdr.env } });
    await slash("/piw workspace", "Opened the viewer of run");
    const [pane] = herdr.state().panes;
    expect(pane).toMatchObject({ label: `piw ${runId}`, env: { PIW_HERDR_RUN_ID: runId } });
    expect(herdr.calls().some((args) => args.slice(0, 2).join(" ") === "workspace create")).toBe(true);
  }, 120_000);

  it("outside Herdr, /piw says what it needs and calls no herdr", async () => {
    scratch = mkdtempSync(join(tmpdir(), "piw-e2e-herdr-"));
    const herdr = installHerdrStandIn(scratch);
    world = await startPiwWorld({ workflows: { sum: SUM }, env: herdr.env });
    const said = await slash("/piw", "/piw opens the run's viewer in a Herdr pane");
    expect(said).toContain("Pi must run inside Herdr (HERDR_ENV=1 and HERDR_PANE_ID");
    expect(said).toContain("piw view <runId>");
    expect(herdr.calls()).toEqual([]);
  }, 120_000);
});
