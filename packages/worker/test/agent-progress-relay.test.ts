import type { IsolatedStep } from "@piw/engine";
import type { AgentProgress } from "@piw/protocol";
import { describe, expect, it } from "vitest";
import { AgentProgressRelay } from "../src/agent-progress-relay.js";

const step = (path: string): IsolatedStep => ({
  runId: "run-1",
  path,
  visit: 1,
  attempt: 1,
  outputSchema: {},
  tools: ["read"],
  cwd: "/tmp",
});

describe("the agent progress relay with two agent steps of parallel branches", () => {
  it("sends each step's first fact at once and counts each step's tool calls on its own", () => {
    const sent: AgentProgress[] = [];
    const relay = new AgentProgressRelay((fact) => sent.push(fact));
    const alpha = step("fan/alpha/check");
    const beta = step("fan/beta/check");
    relay.report(alpha, { kind: "tool", text: "read a.ts" });
    relay.report(beta, { kind: "tool", text: "read b.ts" });
    // The second branch's fact is not held behind the first one's rate limit.
    expect(sent.map((f) => [f.path, f.visit, f.text, f.toolCalls])).toEqual([
      ["fan/alpha/check", 1, "read a.ts", 1],
      ["fan/beta/check", 1, "read b.ts", 1],
    ]);
    relay.report(alpha, { kind: "tool", text: "read c.ts" });
    relay.report(alpha, { kind: "submitted", text: '{"ok":true}' });
    const submitted = sent.at(-1);
    // The interleaved branch did not reset the first one's count.
    expect(submitted).toMatchObject({ path: "fan/alpha/check", kind: "submitted", toolCalls: 2 });
    expect(new Set(sent.map((f) => f.seq)).size).toBe(sent.length);
  });
});
