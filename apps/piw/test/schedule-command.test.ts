import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ExitCode } from "../src/exit-codes.js";
import { OUTPUT_SCHEMAS } from "../src/output-schemas.js";
import { cleanUp, example, makeHome, makeProject, piw } from "./cli-harness.js";
import { removeTree } from "@piw/test-kit";

// `piw schedule` against the real host, preflight and worker processes from source.
const SLOW = 240_000;

describe("piw schedule", () => {
  let home: string;
  let project: string;
  beforeAll(() => {
    home = makeHome();
    project = makeProject();
  });
  afterAll(async () => {
    await cleanUp(home);
    removeTree(project);
  });

  it(
    "adds a schedule whose runs complete and name it; lists, pauses, triggers and deletes it",
    async () => {
      const added = await piw(
        home,
        ["schedule", "add", example("hello"), "--every", "2s", "tick", "--json"],
        {
          cwd: project,
        },
      );
      expect(added.code).toBe(ExitCode.ok);
      const schedule = OUTPUT_SCHEMAS.schedule.parse(JSON.parse(added.stdout)).schedule;
      expect(schedule).toMatchObject({ scheduleId: "hello", timing: { kind: "every", everyMs: 2_000 } });

      let runId = "";
      for (let i = 0; i < 300 && runId === ""; i += 1) {
        const listed = await piw(home, ["list", "--schedule", "hello", "--json"]);
        const done = OUTPUT_SCHEMAS.list
          .parse(JSON.parse(listed.stdout))
          .runs.find((r) => r.status === "done");
        if (done) runId = done.runId;
        else await new Promise((r) => setTimeout(r, 200));
      }
      expect(runId).not.toBe("");
      const status = await piw(home, ["status", runId]);
      expect(status.stdout).toMatch(/schedule hello, fired for \d{4}-\d\d-\d\dT/);

      const paused = await piw(home, ["schedule", "pause", "hello", "--note", "lunch"]);
      expect(paused.stdout).toContain("paused hello");
      const table = await piw(home, ["schedule", "list"]);
      expect(table.stdout).toMatch(/hello\s+hello\.workflow\.ts\s+every 2s\s+paused \(by request: lunch\)/);

      const triggered = await piw(home, ["schedule", "trigger", "hello", "--json"]);
      expect(triggered.code).toBe(ExitCode.ok);
      expect(OUTPUT_SCHEMAS.schedule.parse(JSON.parse(triggered.stdout)).run?.origin).toMatchObject({
        kind: "schedule",
        scheduleId: "hello",
      });

      const listed = OUTPUT_SCHEMAS.schedules.parse(
        JSON.parse((await piw(home, ["schedule", "list", "--json"])).stdout),
      );
      expect(listed.schedules).toHaveLength(1);
      expect(listed.schedules[0]?.lastFiring?.outcome).toBe("started");

      expect((await piw(home, ["schedule", "delete", "hello"])).stdout).toContain(
        "deleted hello; its runs stay",
      );
      expect((await piw(home, ["schedule", "list"])).stdout.trim()).toBe("no schedules");
    },
    SLOW,
  );

  it(
    "refuses a schedule without a timing, with two, or with a cron or zone it cannot read",
    async () => {
      const none = await piw(home, ["schedule", "add", example("hello"), "hi"], { cwd: project });
      expect(none.code).toBe(ExitCode.usage);
      expect(none.stderr).toContain("a schedule needs every <duration> or cron <expr>");
      const both = await piw(home, [
        "schedule",
        "add",
        example("hello"),
        "--every",
        "1m",
        "--cron",
        "* * * * *",
      ]);
      expect(both.code).toBe(ExitCode.usage);
      const cron = await piw(home, ["schedule", "add", example("hello"), "--cron", "61 * * * *", "hi"], {
        cwd: project,
      });
      expect(cron.code).not.toBe(ExitCode.ok);
      expect(cron.stderr).toContain("not a cron expression of five fields");
      const zone = await piw(
        home,
        ["schedule", "add", example("hello"), "--cron", "0 9 * * 1-5", "--tz", "Mars/Olympus", "hi"],
        { cwd: project },
      );
      expect(zone.stderr).toContain("unknown time zone");
      const missing = await piw(home, ["schedule", "add", "no-such-flow", "--every", "1m"], { cwd: project });
      expect(missing.code).toBe(ExitCode.usage);
    },
    SLOW,
  );
});
