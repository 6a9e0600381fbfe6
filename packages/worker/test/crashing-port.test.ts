import { RUN_PORT_METHODS, type RunPort } from "@piw/engine";
import type { RecoveryReason } from "@piw/protocol";
import { describe, expect, it } from "vitest";
import { crashHookFromEnv, crashingPort } from "../src/crash-hook.js";

/** A port that answers every call with a saved transition and notes the method and its first argument. */
function recordingPort(calls: Array<[string, unknown]>): RunPort {
  return new Proxy({} as RunPort, {
    get: (_target, name) => (arg: unknown) => {
      calls.push([String(name), arg]);
      return Promise.resolve({ kind: "applied", value: {} });
    },
  });
}

describe("the crash hook's port", () => {
  it("forwards every method of the port to the host-backed port, with its argument", async () => {
    const calls: Array<[string, unknown]> = [];
    const port = crashingPort(recordingPort(calls), crashHookFromEnv({}));
    for (const [i, method] of RUN_PORT_METHODS.entries()) {
      await (port[method] as (arg: unknown) => unknown)({ call: i });
    }
    expect(calls).toEqual(RUN_PORT_METHODS.map((method, i) => [method, { call: i }]));
  });

  it("sends a branch's wait schedule on (visit.schedule), not dropped", async () => {
    const calls: Array<[string, unknown]> = [];
    const port = crashingPort(recordingPort(calls), crashHookFromEnv({}));
    const waiting: RecoveryReason = { code: "waiting", message: "w", path: "fan/a/a", visit: 1, until: 9 };
    expect(await port.scheduleVisit(waiting)).toEqual({ kind: "applied", value: {} });
    expect(calls).toEqual([["scheduleVisit", waiting]]);
  });
});
