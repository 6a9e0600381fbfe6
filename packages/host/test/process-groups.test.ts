import { spawn } from "node:child_process";
import { describe, expect, it } from "vitest";
import { groupLeaderOf, killProcessGroups, mayKillGroup } from "../src/process-groups.js";

const exited = (child: ReturnType<typeof spawn>) =>
  new Promise<void>((resolve) => child.once("exit", () => resolve()));

describe.runIf(process.platform === "linux")("process groups the host may kill", () => {
  it("tells this process's own group leader from a foreign process and from one that is gone", async () => {
    const leader = spawn("sleep", ["30"], { detached: true, stdio: "ignore" });
    const inGroup = spawn("sleep", ["30"], { stdio: "ignore" });
    const pid = leader.pid as number;
    expect(groupLeaderOf(pid, process.pid)).toBe("child");
    // A child of this process that leads no group of its own, another parent, this process itself.
    expect(groupLeaderOf(inGroup.pid as number, process.pid)).toBe("foreign");
    expect(groupLeaderOf(pid, process.pid + 1)).toBe("foreign");
    expect(groupLeaderOf(process.pid, process.ppid)).toBe("foreign");
    expect(groupLeaderOf(1, 0)).toBe("foreign");

    const gone = exited(leader);
    expect(killProcessGroups([pid])).toEqual([pid]);
    await gone;
    expect(groupLeaderOf(pid, process.pid)).toBe("gone");
    // Killing a group that is gone is no error, and nothing is said to be killed.
    expect(killProcessGroups([pid])).toEqual([]);
    inGroup.kill("SIGKILL");
    await exited(inGroup);
  });

  it("never lets group 0, group 1 or the host's own process be signalled", () => {
    // Checked without sending anything: a broken guard must fail this test, not kill every process.
    for (const pgid of [0, 1, -5, 2.5, process.pid]) expect(mayKillGroup(pgid), String(pgid)).toBe(false);
    expect(mayKillGroup(process.pid + 1)).toBe(true);
  });
});
