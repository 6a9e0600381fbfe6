import { describe, expect, it } from "vitest";
import { PIW_ENV, readPiwEnv } from "../src/index.js";

describe("readPiwEnv", () => {
  it("reads unset and empty alike, and parses a JSON argv", () => {
    expect(readPiwEnv({}, PIW_ENV.hostCommand)).toEqual({ kind: "unset" });
    expect(readPiwEnv({ PIW_HOST_COMMAND: "" }, PIW_ENV.hostCommand)).toEqual({ kind: "unset" });
    expect(readPiwEnv({ PIW_HOST_COMMAND: '["node","/h.js"]' }, PIW_ENV.hostCommand)).toEqual({
      kind: "set",
      value: ["node", "/h.js"],
    });
  });

  it.each(["not json", "[]", '["node", ""]', '"/secret/host.js"', "[1]", '{"0":"node"}'])(
    "refuses %j as an argv, naming the variable and never the value",
    (value) => {
      const read = readPiwEnv({ PIW_WORKER_COMMAND: value }, PIW_ENV.workerCommand);
      expect(read.kind).toBe("invalid");
      const message = read.kind === "invalid" ? read.message : "";
      expect(message).toMatch(/^PIW_WORKER_COMMAND must be a JSON array/);
      if (value.length > 2) expect(message).not.toContain(value);
    },
  );

  it("checks words and numbers", () => {
    expect(readPiwEnv({ PIW_SYNCHRONOUS: "NORMAL" }, PIW_ENV.synchronous)).toEqual({
      kind: "set",
      value: "NORMAL",
    });
    expect(readPiwEnv({ PIW_SYNCHRONOUS: "OFF" }, PIW_ENV.synchronous)).toEqual({
      kind: "invalid",
      message: "PIW_SYNCHRONOUS must be FULL or NORMAL",
    });
    expect(readPiwEnv({ PIW_PREFLIGHT_TIMEOUT_MS: "600001" }, PIW_ENV.preflightTimeoutMs).kind).toBe(
      "invalid",
    );
    expect(readPiwEnv({ PIW_PREFLIGHT_TIMEOUT_MS: "25" }, PIW_ENV.preflightTimeoutMs)).toEqual({
      kind: "set",
      value: 25,
    });
  });

  it("names each variable once, under a name that matches its key's spelling", () => {
    const names = Object.values(PIW_ENV).map((variable) => variable.name);
    expect(new Set(names).size).toBe(names.length);
  });
});
