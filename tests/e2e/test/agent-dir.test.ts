import { getAgentDir } from "@earendil-works/pi-coding-agent";
import { piAgentDir } from "@piw/state-dir";
import { afterEach, describe, expect, it } from "vitest";

const saved = process.env.PI_CODING_AGENT_DIR;
afterEach(() => {
  if (saved === undefined) delete process.env.PI_CODING_AGENT_DIR;
  else process.env.PI_CODING_AGENT_DIR = saved;
});

describe("piw's agent folder is Pi's", () => {
  // piw computes the folder itself, because the host, workers and CLI run without Pi; this pins it to
  // what the Pi it serves computes, for every form of PI_CODING_AGENT_DIR.
  it.each([
    undefined,
    "",
    "/srv/pi-agent",
    "relative/agent",
    "~",
    "~/pi-agent",
    "~other/agent",
    "file:///srv/pi%20agent",
  ])("PI_CODING_AGENT_DIR=%j", (value) => {
    if (value === undefined) delete process.env.PI_CODING_AGENT_DIR;
    else process.env.PI_CODING_AGENT_DIR = value;
    expect(piAgentDir()).toBe(getAgentDir());
  });
});
