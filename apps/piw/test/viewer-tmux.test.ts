import { execFileSync } from "node:child_process";
import { existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { SPLIT_MIN_PANE } from "@piw/viewer";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { removeTree, waitFor } from "@piw/test-kit";
import {
  cleanUp,
  example,
  hostCommand,
  makeHome,
  makeProject,
  piw,
  repo,
  runIdIn,
  workerCommand,
} from "./cli-harness.js";
import { pngHeightFor, pngSize, pngWidthFor, writeScreenPng } from "./screen-png.js";

// The real `piw` in a real terminal: tmux runs it, `send-keys` types, `capture-pane` reads the
// screen. Nothing here is mocked: the viewer talks to a real host over its socket.

const SLOW = 120_000;
const server = `piw-viewer-${process.pid}`;
const tsx = join(repo, "node_modules", "tsx", "dist", "loader.mjs");

function tmux(...args: string[]): string {
  return execFileSync("tmux", ["-L", server, ...args], { encoding: "utf8" });
}

const quote = (word: string) => `'${word.replaceAll("'", "'\\''")}'`;

// Below 100 columns the run screen is one column; from 100 on it splits into graph and inspector.
const NARROW = { columns: 90, rows: 32 };
const WIDE = { columns: 150, rows: 36 };
// What the tests saw, as pictures: CI keeps .reports, so a reviewer can look at what users see.
const SHOTS = join(repo, ".reports", "viewer-tmux");

interface ViewerTerminal {
  hostArgv?: readonly string[];
  columns?: number;
  rows?: number;
  /** Colour on, for the pictures; the text checks read the screen without its colours either way. */
  colour?: boolean;
}

/** Starts `piw <args>` in a fresh tmux session named `viewer`, with the test's state folder. */
function startViewer(home: string, args: string[], terminal: ViewerTerminal = {}): void {
  const env = {
    PIW_HOME: home,
    PIW_HOST_COMMAND: JSON.stringify(terminal.hostArgv ?? hostCommand),
    PIW_WORKER_COMMAND: JSON.stringify(workerCommand),
    TSX_TSCONFIG_PATH: join(repo, "tsconfig.json"),
    // A UTF-8 locale, so the viewer draws its Unicode glyphs whatever the test's own locale is.
    LANG: "C.UTF-8",
    ...(terminal.colour === true ? { TERM: "xterm-256color" } : { NO_COLOR: "1" }),
    PATH: process.env.PATH ?? "",
  };
  const command = [
    "env",
    ...Object.entries(env).map(([name, value]) => `${name}=${value}`),
    process.execPath,
    "--import",
    tsx,
    join(repo, "apps/piw/src/main.ts"),
    ...args,
  ]
    .map(quote)
    .join(" ");
  tmux(
    "new-session",
    "-d",
    "-s",
    "viewer",
    "-x",
    String(terminal.columns ?? NARROW.columns),
    "-y",
    String(terminal.rows ?? NARROW.rows),
    "-c",
    repo,
    `${command}; echo "piw exited with $?"; sleep 600`,
  );
}

function screen(): string {
  return tmux("capture-pane", "-p", "-t", "viewer");
}

/** The screen as it looks, colours included, saved as a PNG; checks the picture is a real one. */
function snapshot(name: string, columns: number, rows: number): void {
  const ansi = tmux("capture-pane", "-p", "-e", "-t", "viewer");
  const shot = writeScreenPng(SHOTS, name, ansi, columns, rows);
  expect(pngSize(readFileSync(shot.file))).toEqual({
    width: pngWidthFor(columns),
    height: pngHeightFor(rows),
  });
  // Text was drawn: a blank picture (no font, nothing captured) has no inked pixels.
  expect(shot.inked).toBeGreaterThan(columns * 20);
}

async function waitForScreen(
  what: string,
  check: (text: string) => boolean,
  timeoutMs = 30_000,
): Promise<string> {
  let last = "";
  try {
    await waitFor(
      what,
      () => {
        last = screen();
        return check(last);
      },
      timeoutMs,
    );
  } catch (error) {
    throw new Error(`${(error as Error).message}; the screen was:\n${last}`);
  }
  return last;
}

describe("piw viewer in tmux", () => {
  let home: string;
  let runId: string;
  let olderRunId: string;
  let block: string;
  beforeAll(async () => {
    home = makeHome();
    block = join(home, "no-host");
    const first = await piw(home, ["run", example("hello"), "first"]);
    expect(first.code).toBe(0);
    olderRunId = runIdIn(first.stdout);
    const ran = await piw(home, ["run", example("hello"), "from tmux"]);
    expect(ran.code).toBe(0);
    runId = runIdIn(ran.stdout);
  }, SLOW);
  afterEach(() => {
    // A test that failed midway leaves its session: the next one starts its own under the same name.
    try {
      tmux("kill-session", "-t", "viewer");
    } catch {
      // Already closed by the test.
    }
  });
  afterAll(async () => {
    try {
      tmux("kill-server");
    } catch {
      // Already gone with its last session.
    }
    rmSync(block, { force: true });
    await cleanUp(home);
  });

  it(
    "opens a run, scrubs back two steps, opens the inspector, survives a host restart and quits",
    async () => {
      // The viewer starts hosts through a gate, so the test can keep a host away for a while.
      const gatedHost = ["sh", "-c", 'if [ -e "$0" ]; then exit 1; fi; exec "$@"', block, ...hostCommand];
      startViewer(home, [], { hostArgv: gatedHost });

      // Bare `piw` in a terminal: the run list.
      const list = await waitForScreen(
        "the run list",
        (text) => text.includes(runId) && text.includes(olderRunId),
      );
      expect(list).toContain("piw · runs · filter: all · 2 of 2");
      expect(list).toMatch(new RegExp(`› ✓ completed {2}hello .*${runId}`));
      expect(list).toContain("↑↓ choose  enter open  tab filter  ? help  q quit");
      // The mouse wheel (SGR reports, as a terminal sends them) moves through the list.
      tmux("send-keys", "-t", "viewer", "-l", "\u001b[<65;10;5M");
      await waitForScreen("the wheel down", (text) =>
        new RegExp(`› ✓ completed {2}hello .*${olderRunId}`).test(text),
      );
      tmux("send-keys", "-t", "viewer", "-l", "\u001b[<64;10;5M");
      await waitForScreen("the wheel up", (text) =>
        new RegExp(`› ✓ completed {2}hello .*${runId}`).test(text),
      );

      tmux("send-keys", "-t", "viewer", "Enter");
      const live = await waitForScreen("the run's graph", (text) => text.includes("◎ done"));
      expect(live).toContain(`piw · hello (Say hello) · ${runId} · ✓ completed`);
      // A finished run is not live: the line says it finished, and where it ended.
      expect(live).toContain("· finished  at echo");
      expect(live).not.toContain("● live");
      expect(live).toMatch(/┃ \$ echo +┃\n┃ ✓ succeeded #1/);

      tmux("send-keys", "-t", "viewer", "Left");
      tmux("send-keys", "-t", "viewer", "Left");
      // The screen may be read between the two keys: wait for the second, which must land two back.
      const replayPosition = (text: string) => {
        const [, at, of] = /◀ replay (\d+)\/(\d+)/.exec(text) ?? [];
        return at === undefined ? undefined : { at: Number(at), of: Number(of) };
      };
      const replay = await waitForScreen("two steps back", (text) => {
        const position = replayPosition(text);
        return position !== undefined && position.at <= position.of - 2;
      });
      const position = replayPosition(replay);
      expect(position?.at).toBe(position && position.of - 2);
      // Two events before the end, the run has not finished yet.
      expect(replay).not.toContain("✓ completed");

      tmux("send-keys", "-t", "viewer", "Enter");
      const inspector = await waitForScreen("the inspector", (text) => text.includes("output"));
      expect(inspector).toMatch(/visit 1, attempt 1: succeeded/);
      expect(inspector).toContain("esc close");

      // The host goes away and, while the gate is shut, stays away: the viewer says so.
      tmux("send-keys", "-t", "viewer", "End");
      writeFileSync(block, "");
      const stopped = await piw(home, ["host", "stop"]);
      expect(stopped.code).toBe(0);
      await waitForScreen("the host gone", (text) => text.includes("host went away"));
      // Open the gate: the viewer starts a host, reconnects and shows the run live again.
      rmSync(block);
      await waitForScreen(
        "the reconnect",
        (text) => text.includes("· finished") && !text.includes("host went away"),
      );
      expect(existsSync(join(home, "host.sock"))).toBe(true);

      // Too small to draw: a clear message; big again: the screen is drawn again.
      tmux("resize-window", "-t", "viewer", "-x", "30", "-y", "8");
      const small = await waitForScreen("the too-small message", (text) =>
        text.includes("terminal too small"),
      );
      expect(small.replace(/\s+/g, " ")).toContain("need 40×10, have 30×8");
      tmux("resize-window", "-t", "viewer", "-x", String(NARROW.columns), "-y", String(NARROW.rows));
      await waitForScreen(
        "the inspector again",
        (text) => text.includes("· finished  at echo") && text.includes("output"),
      );

      tmux("send-keys", "-t", "viewer", "q");
      const after = await waitForScreen("piw to exit", (text) => text.includes("piw exited with"));
      expect(after).toContain("piw exited with 0");
      tmux("kill-session", "-t", "viewer");
    },
    SLOW,
  );

  it(
    "splits a wide terminal into graph and inspector, resizes with < and >, and saves what it showed",
    async () => {
      const { columns, rows } = WIDE;
      startViewer(home, ["view", runId], { columns, rows, colour: true });
      // The divider's column on the row of the inspector's heading.
      const divider = (text: string) => {
        const row = text.split("\n").find((line) => line.includes("$ echo  shell")) ?? "";
        return row.indexOf(" │ $ echo  shell");
      };
      const split = await waitForScreen(
        "the split layout",
        (text) => divider(text) > 0 && text.includes("output"),
      );
      // The graph takes what it needs (here the minimum pane), the inspector the rest.
      const left = divider(split);
      expect(left).toBe(SPLIT_MIN_PANE);
      expect(split).toContain("< > resize");
      expect(split).toMatch(/visit 1, attempt 1: succeeded/);
      snapshot("split", columns, rows);

      tmux("send-keys", "-t", "viewer", "-l", ">");
      tmux("send-keys", "-t", "viewer", "-l", ">");
      await waitForScreen("a wider graph", (text) => divider(text) === left + 8);
      tmux("send-keys", "-t", "viewer", "-l", "<");
      await waitForScreen("a narrower graph", (text) => divider(text) === left + 4);
      snapshot("split-narrowed", columns, rows);

      // Narrow again: one column, the graph alone, and back to the split when it is wide.
      tmux("resize-window", "-t", "viewer", "-x", String(NARROW.columns), "-y", String(NARROW.rows));
      const narrow = await waitForScreen(
        "the one-column layout",
        (text) => text.includes("◎ done") && divider(text) < 0,
      );
      expect(narrow).not.toContain("< > resize");
      snapshot("narrow", NARROW.columns, NARROW.rows);
      tmux("resize-window", "-t", "viewer", "-x", String(columns), "-y", String(rows));
      await waitForScreen("the split again", (text) => divider(text) === left + 4);

      tmux("send-keys", "-t", "viewer", "?");
      const help = await waitForScreen("the help", (text) =>
        text.includes("close the inspector, back to the graph"),
      );
      expect(help).toMatch(/esc +list +quit the viewer/);
      snapshot("help", columns, rows);
      tmux("send-keys", "-t", "viewer", "Escape");
      await waitForScreen(
        "the help closed",
        (text) => !text.includes("quit the viewer") && divider(text) > 0,
      );

      tmux("send-keys", "-t", "viewer", "q");
      await waitForScreen("piw to exit", (text) => text.includes("piw exited with 0"));
      tmux("kill-session", "-t", "viewer");

      // The same run, drawn for a terminal that cannot show the Unicode glyphs.
      const ascii = await piw(home, ["view", runId, "--once", "--width", "80"], { env: { PIW_ASCII: "1" } });
      expect(ascii.code).toBe(0);
      expect(ascii.stdout).toMatch(/^[\x20-\x7e\n]*$/);
      expect(ascii.stdout).toContain(`piw - hello (Say hello) - ${runId} - v completed`);
    },
    SLOW,
  );

  it(
    "follows a live run and shows the change the host pushes",
    async () => {
      const project = makeProject();
      try {
        const started = await piw(home, ["run", "slow", "--detach"], { cwd: project });
        expect(started.code).toBe(0);
        const slowRunId = runIdIn(started.stdout);
        startViewer(home, ["view", slowRunId]);
        const live = await waitForScreen("the running node", (text) => text.includes("following wait"));
        expect(live).toMatch(/┃ \$ wait +┃\n┃ ▶ running #1/);
        const cancelled = await piw(home, ["cancel", slowRunId]);
        expect(cancelled.code).toBe(0);
        const after = await waitForScreen("the cancelled run", (text) => text.includes("■ cancelled"));
        expect(after).not.toContain("following wait");
        tmux("send-keys", "-t", "viewer", "q");
        await waitForScreen("piw to exit", (text) => text.includes("piw exited with 0"));
        tmux("kill-session", "-t", "viewer");
      } finally {
        removeTree(project);
      }
    },
    SLOW,
  );

  it(
    "switches inspector tabs by key and by click, lists the trace and the run's info",
    async () => {
      const { columns, rows } = WIDE;
      startViewer(home, ["view", runId], { columns, rows });
      await waitForScreen("the split layout", (text) =>
        text.includes(" 1 Steps │ 2 Conversation │ 3 Trace │ 4 Info"),
      );
      tmux("send-keys", "-t", "viewer", "3");
      // Each wait holds out for what is then checked: tmux may capture a frame half drawn.
      const trace = await waitForScreen(
        "the trace tab",
        (text) => text.includes("events of echo") && /node\.started echo #1 +kind=shell/.test(text),
      );
      expect(trace).toMatch(/node\.started echo #1 +kind=shell/);
      expect(trace).not.toContain("node.started greet");
      tmux("send-keys", "-t", "viewer", "a");
      const all = await waitForScreen(
        "every event",
        (text) =>
          text.includes("every event of the run") &&
          /node\.started greet #1 +kind=compute/.test(text) &&
          text.includes("run.completed"),
      );
      expect(all).toMatch(/node\.started greet #1 +kind=compute/);
      expect(all).toContain("run.completed");
      // A click (an SGR press and release, one-based) on the Info tab's title.
      const bar = all.split("\n").findIndex((line) => line.includes("4 Info"));
      const column = (all.split("\n")[bar] ?? "").indexOf("4 Info");
      tmux(
        "send-keys",
        "-t",
        "viewer",
        "-l",
        `\u001b[<0;${column + 2};${bar + 1}M\u001b[<0;${column + 2};${bar + 1}m`,
      );
      const info = await waitForScreen(
        "the info tab",
        (text) => text.includes("lineage") && text.includes(`file      ${example("hello")}`),
      );
      expect(info).toContain('task: "from tmux"');
      expect(info).toContain("made by   new run");
      expect(info).toContain(`file      ${example("hello")}`);
      // A click on the greet card chooses it: the Steps tab then shows greet's visit.
      tmux("send-keys", "-t", "viewer", "1");
      await waitForScreen("the steps tab", (text) => text.includes("$ echo  shell"));
      const graph = screen().split("\n");
      const card = graph.findIndex((line) => line.includes("greet"));
      const x = (graph[card] ?? "").indexOf("greet");
      tmux(
        "send-keys",
        "-t",
        "viewer",
        "-l",
        `\u001b[<0;${x + 1};${card + 1}M\u001b[<0;${x + 1};${card + 1}m`,
      );
      const chosen = await waitForScreen("greet chosen", (text) => /greet +compute/.test(text));
      expect(chosen).toContain('"hello from piw: from tmux"');
      // SGR mouse reporting is on while the viewer runs, and off once it has quit.
      const mouse = () => tmux("display-message", "-p", "-t", "viewer", "#{mouse_sgr_flag}").trim();
      expect(mouse()).toBe("1");
      tmux("send-keys", "-t", "viewer", "q");
      await waitForScreen("piw to exit", (text) => text.includes("piw exited with 0"));
      expect(mouse()).toBe("0");
    },
    SLOW,
  );

  it(
    "plays the replay at 1×, 2×, 5× and 10×, pauses it and jumps back to live",
    async () => {
      startViewer(home, ["view", runId], { columns: WIDE.columns, rows: WIDE.rows });
      await waitForScreen("the run", (text) => text.includes("◎ done"));
      const speeds: string[] = [];
      for (const speed of ["2×", "5×", "10×", "1×"]) {
        tmux("send-keys", "-t", "viewer", "x");
        tmux("send-keys", "-t", "viewer", "Left");
        const paused = await waitForScreen(`${speed} chosen`, (text) =>
          speed === "1×"
            ? /◀ replay \d+\/\d+/.test(text) && !/paused|playing/.test(text)
            : text.includes(`paused ${speed}`),
        );
        speeds.push(paused.includes(`paused ${speed}`) ? speed : "1×");
        tmux("send-keys", "-t", "viewer", "End");
        await waitForScreen("live again", (text) => !text.includes("◀ replay"));
      }
      expect(speeds).toEqual(["2×", "5×", "10×", "1×"]);
      // At 10× the whole trace plays from its first event back to live on its own.
      tmux("send-keys", "-t", "viewer", "x");
      tmux("send-keys", "-t", "viewer", "x");
      tmux("send-keys", "-t", "viewer", "x");
      tmux("send-keys", "-t", "viewer", "Space");
      const playing = await waitForScreen("playing", (text) => text.includes("playing 10×"));
      const at = (text: string) => Number(/◀ replay (\d+)\//.exec(text)?.[1] ?? 0);
      const first = at(playing);
      const later = await waitForScreen("the replay moving on", (text) => at(text) > first + 1);
      expect(later).toContain("playing 10×");
      await waitForScreen(
        "the end of the replay, live",
        (text) => !text.includes("◀ replay") && text.includes("finished"),
      );
      // Played again and paused: the cursor stays where it was.
      tmux("send-keys", "-t", "viewer", "Space");
      await waitForScreen("playing again", (text) => text.includes("playing 10×"));
      tmux("send-keys", "-t", "viewer", "Space");
      const paused = await waitForScreen("paused", (text) => text.includes("paused 10×"));
      await new Promise((resolve) => setTimeout(resolve, 500));
      expect(at(screen())).toBe(at(paused));
      tmux("send-keys", "-t", "viewer", "End");
      await waitForScreen("live", (text) => !text.includes("◀ replay"));
      tmux("send-keys", "-t", "viewer", "q");
    },
    SLOW,
  );

  it(
    "scrolls the pane under the wheel and drags the divider with the mouse",
    async () => {
      const { columns, rows } = WIDE;
      startViewer(home, ["view", runId], { columns, rows });
      const divider = (text: string) => {
        const row = text.split("\n").find((line) => line.includes("$ echo  shell")) ?? "";
        return row.indexOf(" │ $ echo  shell");
      };
      const split = await waitForScreen("the split layout", (text) => divider(text) > 0);
      const left = divider(split);
      const row = split.split("\n").findIndex((line) => line.includes("$ echo  shell"));
      // Press on the divider, drag it 20 columns right, let go (SGR: 32 marks a motion with button 1).
      const sgr = (button: number, x: number, end: "M" | "m") =>
        `\u001b[<${button};${x + 1};${row + 1}${end}`;
      tmux("send-keys", "-t", "viewer", "-l", sgr(0, left + 1, "M"));
      tmux("send-keys", "-t", "viewer", "-l", sgr(32, left + 11, "M"));
      tmux("send-keys", "-t", "viewer", "-l", sgr(32, left + 21, "M"));
      tmux("send-keys", "-t", "viewer", "-l", sgr(0, left + 21, "m"));
      await waitForScreen("the divider dragged", (text) => divider(text) === left + 20);
      // The wheel over the inspector scrolls it (and it takes the keys), not the graph.
      tmux("send-keys", "-t", "viewer", "3");
      await waitForScreen("the trace tab", (text) => text.includes("events of echo"));
      tmux("send-keys", "-t", "viewer", "a");
      await waitForScreen("every event", (text) => text.includes("every event of the run"));
      const before = screen();
      tmux("send-keys", "-t", "viewer", "-l", `\u001b[<65;${columns - 10};10M`);
      const after = await waitForScreen(
        "the inspector scrolled",
        (text) => text !== before && text.includes("esc close"),
      );
      expect(after.split("\n").filter((line) => line.includes("◎ done")).length).toBe(
        before.split("\n").filter((line) => line.includes("◎ done")).length,
      );
      tmux("send-keys", "-t", "viewer", "q");
    },
    SLOW,
  );

  it(
    "tells an unknown run ID apart, without a terminal",
    async () => {
      const unknown = await piw(home, ["view", "nope-123", "--once"]);
      expect(unknown.code).toBe(1);
      expect(unknown.stderr).toContain("no run nope-123");
      const once = await piw(home, ["view", runId, "--once", "--width", "100"]);
      expect(once.code).toBe(0);
      expect(once.stdout.startsWith(`piw · hello (Say hello) · ${runId} · ✓ completed · `)).toBe(true);
      expect(once.stdout).toContain("◎ done");
      const json = await piw(home, ["view", runId, "--json"]);
      expect(JSON.parse(json.stdout)).toMatchObject({ runId, workflowName: "hello", status: "done" });
      const noTerminal = await piw(home, ["view", runId]);
      expect(noTerminal.code).toBe(64);
      expect(noTerminal.stderr).toContain("the interactive viewer needs a terminal");
    },
    SLOW,
  );
});
