import { describe, expect, it } from "vitest";
import {
  type BudgetSpend,
  formatBudgetSpend,
  mergeBudget,
  NO_SPEND,
  parseBudgetFlag,
  reachedLimit,
} from "../src/index.js";

function refusal(text: string) {
  const parsed = parseBudgetFlag(text);
  if (parsed.ok) throw new Error(`expected ${text} to be refused`);
  return parsed.error;
}

describe("parseBudgetFlag", () => {
  it("reads every limit with its units", () => {
    expect(parseBudgetFlag("usd=2,tokens=500k,agentTurns=20,wallMs=30m")).toEqual({
      ok: true,
      budget: { usd: 2, tokens: 500_000, agentTurns: 20, wallMs: 1_800_000 },
    });
    expect(parseBudgetFlag(" usd=$0.5 , tokens=1.5M ")).toEqual({
      ok: true,
      budget: { usd: 0.5, tokens: 1_500_000 },
    });
    expect(parseBudgetFlag("wallMs=90s")).toEqual({ ok: true, budget: { wallMs: 90_000 } });
    expect(parseBudgetFlag("wallMs=2h")).toEqual({ ok: true, budget: { wallMs: 7_200_000 } });
    expect(parseBudgetFlag("wallMs=1500")).toEqual({ ok: true, budget: { wallMs: 1500 } });
    expect(parseBudgetFlag("wallMs=250ms")).toEqual({ ok: true, budget: { wallMs: 250 } });
  });

  it("refuses what it cannot read, naming the limit and its form", () => {
    expect(refusal("")).toMatchObject({ code: "budget_invalid", limit: null });
    expect(refusal("tokens=lots")).toMatchObject({ limit: "tokens" });
    expect(refusal("tokens=lots").message).toContain("tokens=500k");
    expect(refusal("usd=0")).toMatchObject({ limit: "usd" });
    expect(refusal("usd=-1")).toMatchObject({ limit: "usd" });
    expect(refusal("agentTurns=2.5")).toMatchObject({ limit: "agentTurns" });
    expect(refusal("tokens=0.5")).toMatchObject({ limit: "tokens" });
    expect(refusal("wallMs=10d")).toMatchObject({ limit: "wallMs" });
    expect(refusal("usd")).toMatchObject({ limit: "usd" });
    expect(refusal("usd=1,usd=2").message).toContain("given twice");
    expect(refusal("usd=1,")).toMatchObject({ limit: null });
    expect(refusal("x".repeat(300)).message).toContain("longer than");
  });

  it("never quotes the text it was given: a pasted secret stays out of the error", () => {
    for (const text of ["sk-live-SECRET123=4", "usd=sk-live-SECRET123", "tokens=SECRET123k", "SECRET123"]) {
      const error = refusal(text);
      expect(error.message).not.toContain("SECRET123");
      expect(error.message.length).toBeLessThanOrEqual(512);
    }
  });
});

describe("reachedLimit", () => {
  const spent = (over: Partial<BudgetSpend>): BudgetSpend => ({ ...NO_SPEND, ...over });

  it("stops at a limit, not before it", () => {
    expect(reachedLimit({ tokens: 100 }, spent({ tokens: 99 }), "during_turn")).toBeNull();
    expect(reachedLimit({ tokens: 100 }, spent({ tokens: 100 }), "during_turn")).toBe("tokens");
    expect(reachedLimit({ usd: 2 }, spent({ usd: 2.01 }), "before_turn")).toBe("usd");
    expect(reachedLimit({ wallMs: 1000 }, spent({ wallMs: 1000 }), "during_turn")).toBe("wallMs");
  });

  it("counts agent turns only before a turn starts: the turn under way is one of them", () => {
    expect(reachedLimit({ agentTurns: 2 }, spent({ agentTurns: 2 }), "during_turn")).toBeNull();
    expect(reachedLimit({ agentTurns: 2 }, spent({ agentTurns: 2 }), "before_turn")).toBe("agentTurns");
    expect(reachedLimit({ agentTurns: 2 }, spent({ agentTurns: 1 }), "before_turn")).toBeNull();
  });
});

describe("mergeBudget and formatBudgetSpend", () => {
  it("puts the given limits over the saved ones and keeps the rest", () => {
    expect(mergeBudget({ usd: 1, tokens: 100 }, { tokens: 1000 })).toEqual({ usd: 1, tokens: 1000 });
    expect(mergeBudget(null, { usd: 3 })).toEqual({ usd: 3 });
    expect(mergeBudget(null, undefined)).toBeNull();
  });

  it("shows spend against each set limit", () => {
    expect(
      formatBudgetSpend(
        { usd: 2, tokens: 500_000, wallMs: 600_000 },
        spent0({ usd: 0.4, tokens: 120_000, wallMs: 90_000 }),
      ),
    ).toBe("cost $0.40/$2.00 · tokens 120k/500k · time 1m30s/10m");
  });
});

function spent0(over: Partial<BudgetSpend>): BudgetSpend {
  return { ...NO_SPEND, ...over };
}
