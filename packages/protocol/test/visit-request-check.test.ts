import { describe, expect, it } from "vitest";
import { RpcPeer, workerMethods } from "../src/index.js";
import { plainJson } from "../src/visit-request-check.js";
import { COMMON_BAD, expectMutationsHeld } from "./mutations.js";

/**
 * The zod-free checks of the params a host receives from a worker once per node take only what the
 * method's params schema takes, and only values the schema gives back unchanged: the RPC peer hands
 * params that pass one to the handler as they are.
 */

const start = (path: string) => ({ path, visit: 2, nodeKind: "compute", timeoutMs: null, holdOnPause: true });
const finish = (path: string, next: string | null) => ({
  path,
  visit: 1,
  result: { status: "succeeded", output: { items: [1, "two", null, { deep: [true, -0.5] }] }, next },
});

const SAMPLES = {
  "visit.start": start("loop/check"),
  "visit.finish": finish("fetch", null),
  "visit.advance": { finish: finish("fetch", "loop/check"), start: start("loop/check") },
} as const;

const BAD: unknown[] = [
  ...COMMON_BAD,
  1_000_001,
  604_800_001,
  "a//b",
  "failed",
  "timed_out",
  "workflow",
  "__proto__",
  false,
];

type Method = keyof typeof SAMPLES;
const METHODS = Object.keys(SAMPLES) as Method[];

function hold(method: Method, value: unknown): boolean {
  const { quickParams, params } = workerMethods[method];
  if (!quickParams(value)) return false;
  const full = params.safeParse(value);
  expect(full.success, `${method}: ${JSON.stringify(value)?.slice(0, 300)}`).toBe(true);
  expect(full.data).toEqual(value);
  return true;
}

describe("the quick checks of the params a host receives once per node", () => {
  it.each(METHODS)("%s: takes a plain start and a succeeded finish as the schema gives them", (method) => {
    const sample = SAMPLES[method];
    expect(hold(method, sample)).toBe(true);
    expect(hold(method, JSON.parse(JSON.stringify(sample)))).toBe(true);
  });

  it("leaves failed visits, an advance to another node and unknown keys to the schema", () => {
    const failed = {
      path: "test",
      visit: 1,
      result: { status: "failed", error: { code: "node_failed", message: "exit 1" }, next: "fix" },
    };
    expect(workerMethods["visit.finish"].quickParams(failed)).toBe(false);
    expect(workerMethods["visit.finish"].params.safeParse(failed).success).toBe(true);
    const elsewhere = { finish: finish("fetch", "other"), start: start("loop/check") };
    expect(workerMethods["visit.advance"].quickParams(elsewhere)).toBe(false);
    expect(workerMethods["visit.advance"].params.safeParse(elsewhere).success).toBe(false);
    // Own keys named like Object.prototype's members are unknown keys, not inherited ones.
    for (const key of ["__proto__", "constructor", "toString"]) {
      const withKey = JSON.parse(`{"path":"a","visit":1,"nodeKind":"compute","${key}":{}}`);
      expect(workerMethods["visit.start"].quickParams(withKey)).toBe(false);
    }
  });

  it("takes an output only as zod's JSON schema gives it back", () => {
    const parsed = (text: string) => JSON.parse(text) as unknown;
    expect(plainJson(parsed('{"a":[1,{"b":"c"}],"d":null}'))).toBe(true);
    // zod's copy of a record drops an own `__proto__` key: such an output takes the schema's way.
    expect(plainJson(parsed('{"a":{"__proto__":{"x":1}}}'))).toBe(false);
    expect(plainJson(Number.NaN)).toBe(false);
    expect(plainJson(new Date(0))).toBe(false);
    expect(plainJson(undefined)).toBe(false);
  });

  it.each(METHODS)("%s: never takes a mutation the schema refuses or would change (seeded)", (method) => {
    // Outputs take any JSON and optional fields may go, so some mutations are taken; most are not.
    expectMutationsHeld(SAMPLES[method], BAD, method.length * 104_729, (value) => hold(method, value));
  });
});

describe("a request frame checked without zod", () => {
  const methods = workerMethods;
  function served() {
    const sent: unknown[] = [];
    const seen: unknown[] = [];
    const peer = new RpcPeer({
      send: (line) => sent.push(JSON.parse(line)),
      local: {
        methods,
        handlers: Object.fromEntries(
          Object.keys(methods).map((method) => [
            method,
            (params: unknown) => {
              seen.push({ method, params });
              return { kind: "applied", value: { status: "running", path: "a", visit: 1, attempt: 1 } };
            },
          ]),
        ) as never,
      },
    });
    return { peer, sent, seen };
  }

  it("serves a plain request, and answers one the schema refuses as before", async () => {
    const { peer, sent, seen } = served();
    const params = start("a");
    peer.feed(`${JSON.stringify({ v: 1, id: 7, method: "visit.start", params })}\n`);
    // Another version, an ID out of bounds, an empty method: the schema's way refuses each.
    peer.feed(`${JSON.stringify({ v: 99, id: 8, method: "visit.start", params })}\n`);
    peer.feed(`${JSON.stringify({ v: 1, id: "x".repeat(101), method: "visit.start", params })}\n`);
    peer.feed(`${JSON.stringify({ v: 1, id: 9, method: "", params })}\n`);
    // An unknown key goes the schema's way too, which strips it and serves the request.
    peer.feed(`${JSON.stringify({ v: 1, id: 10, method: "visit.start", params, extra: true })}\n`);
    await new Promise((resolve) => setImmediate(resolve));
    expect(seen).toEqual([
      { method: "visit.start", params },
      { method: "visit.start", params },
    ]);
    const codes = sent.map((frame) => (frame as { error?: { code: string } }).error?.code ?? "ok");
    expect(codes.sort()).toEqual(["bad_frame", "bad_frame", "ok", "ok", "protocol_mismatch"]);
  });
});
