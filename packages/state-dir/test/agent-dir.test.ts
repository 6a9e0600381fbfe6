import { homedir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";
import { defaultStateDir, expandHomePath, piAgentDir, userWorkflowsDir } from "../src/index.js";

const HOME = "/home/someone";

describe("piAgentDir: Pi's agent folder, as Pi's getAgentDir() computes it", () => {
  it("is ~/.pi/agent when PI_CODING_AGENT_DIR is unset or empty", () => {
    expect(piAgentDir({ env: {}, homeDir: HOME })).toBe("/home/someone/.pi/agent");
    expect(piAgentDir({ env: { PI_CODING_AGENT_DIR: "" }, homeDir: HOME })).toBe("/home/someone/.pi/agent");
  });

  it("uses os.homedir() and process.env when no options are given", () => {
    const saved = process.env.PI_CODING_AGENT_DIR;
    delete process.env.PI_CODING_AGENT_DIR;
    try {
      expect(piAgentDir()).toBe(join(homedir(), ".pi", "agent"));
      process.env.PI_CODING_AGENT_DIR = "/elsewhere/agent";
      expect(piAgentDir()).toBe("/elsewhere/agent");
    } finally {
      if (saved === undefined) delete process.env.PI_CODING_AGENT_DIR;
      else process.env.PI_CODING_AGENT_DIR = saved;
    }
  });

  it("takes PI_CODING_AGENT_DIR as it is when it is a plain path", () => {
    expect(piAgentDir({ env: { PI_CODING_AGENT_DIR: "/srv/pi" }, homeDir: HOME })).toBe("/srv/pi");
    expect(piAgentDir({ env: { PI_CODING_AGENT_DIR: "rel/pi" }, homeDir: HOME })).toBe("rel/pi");
  });

  it("expands ~ and ~/ in PI_CODING_AGENT_DIR to the home, and a file:// URL to its path", () => {
    expect(piAgentDir({ env: { PI_CODING_AGENT_DIR: "~" }, homeDir: HOME })).toBe(HOME);
    expect(piAgentDir({ env: { PI_CODING_AGENT_DIR: "~/pi-agent" }, homeDir: HOME })).toBe(
      "/home/someone/pi-agent",
    );
    const url = pathToFileURL("/srv/pi agent").href;
    expect(piAgentDir({ env: { PI_CODING_AGENT_DIR: url }, homeDir: HOME })).toBe("/srv/pi agent");
    // Only a leading `~/` is the home: `~user` and an inner `~` stay as written.
    expect(piAgentDir({ env: { PI_CODING_AGENT_DIR: "~other/pi" }, homeDir: HOME })).toBe("~other/pi");
    expect(expandHomePath("/a/~/b", HOME)).toBe("/a/~/b");
  });

  it("puts the user's workflows in <agent dir>/workflows", () => {
    expect(userWorkflowsDir({ env: {}, homeDir: HOME })).toBe("/home/someone/.pi/agent/workflows");
    expect(userWorkflowsDir({ env: { PI_CODING_AGENT_DIR: "~/a" }, homeDir: HOME })).toBe(
      "/home/someone/a/workflows",
    );
  });
});

describe("defaultStateDir: PIW_HOME, else Pi's agent folder's workflows/", () => {
  it("is ~/.pi/agent/workflows with neither variable", () => {
    expect(defaultStateDir({}, HOME)).toBe("/home/someone/.pi/agent/workflows");
  });

  it("follows PI_CODING_AGENT_DIR when PIW_HOME is unset or empty", () => {
    expect(defaultStateDir({ PI_CODING_AGENT_DIR: "/srv/pi" }, HOME)).toBe("/srv/pi/workflows");
    expect(defaultStateDir({ PI_CODING_AGENT_DIR: "~/pi", PIW_HOME: "" }, HOME)).toBe(
      "/home/someone/pi/workflows",
    );
  });

  it("takes PIW_HOME over PI_CODING_AGENT_DIR, and over the default", () => {
    expect(defaultStateDir({ PIW_HOME: "/tmp/x" }, HOME)).toBe("/tmp/x");
    expect(defaultStateDir({ PIW_HOME: "/tmp/x", PI_CODING_AGENT_DIR: "/srv/pi" }, HOME)).toBe("/tmp/x");
  });

  it("expands ~/ in PIW_HOME the same way", () => {
    expect(defaultStateDir({ PIW_HOME: "~/piw-state" }, HOME)).toBe("/home/someone/piw-state");
    expect(defaultStateDir({ PIW_HOME: "~" }, HOME)).toBe(HOME);
  });
});
