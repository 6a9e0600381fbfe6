import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { type HerdrStandIn, installHerdrStandIn } from "../src/herdr-stand-in.ts";
import type { RpcRecord } from "../src/pi-session.ts";
import { PI_PACKAGE, type PiwWorld, startPiwWorld } from "../src/piw-fixture.ts";

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
afterEach(async () => {
  await world?.close();
  world = undefined;
  if (scratch !== undefined) rmSync(scratch, { recursive: true, force: true });
  scratch = undefined;
});

function isNotice(needle: string): (event: RpcRecord) => boolean {
  return (event) =>
    event.type === "extension_ui_request" &&
    event.method === "notify" &&
    String(event.message).includes(needle);
}

async function slash(command: string, expected: string): Promise<string> {
  if (world === undefined) throw new Error("no world");
  const since = world.pi.mark();
  await world.pi.prompt(command);
  const notice = await world.pi.waitForEvent(isNotice(expected), { since, timeoutMs: 30_000 });
  return String(notice.message);
}

/** A world whose Pi runs in the stand-in's pane 1-1 (Herdr's variables set, its `herdr` on PATH). */
async function startInHerdr(): Promise<{ herdr: HerdrStandIn; inHerdr: PiwWorld }> {
  scratch = mkdtempSync(join(tmpdir(), "piw-e2e-herdr-"));
  const herdr = installHerdrStandIn(scratch);
  world = await startPiwWorld({
    workflows: { sum: SUM },
    env: { ...herdr.env, HERDR_ENV: "1", HERDR_PANE_ID: "1-1" },
  });
  return { herdr, inHerdr: world };
}

const opens = (herdr: HerdrStandIn) =>
  herdr.calls().filter((args) => args.slice(0, 3).join(" ") === "plugin pane open");

describe("/piw in a real Pi session inside Herdr (the stand-in herdr)", () => {
  it("opens the current run's viewer in a plugin pane beside Pi, then focuses that pane instead of opening another", async () => {
    const { herdr, inHerdr } = await startInHerdr();

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
