import { type Budget, type BudgetLimit, budgetSchema } from "./budget.js";
import { BUDGET_LIMITS } from "./budget-math.js";

/**
 * Why a `--budget` value was refused. The message names the limit and the form it takes, never the
 * text that was given: a flag pasted from the wrong place may hold anything.
 */
type BudgetFlagError = {
  code: "budget_invalid";
  limit: BudgetLimit | null;
  message: string;
};

type BudgetFlagResult = { ok: true; budget: Budget } | { ok: false; error: BudgetFlagError };

/** The longest flag value read at all; a longer one is refused before it is split. */
const FLAG_MAX_CHARS = 200;

const FORMS: Readonly<Record<BudgetLimit, string>> = {
  usd: "usd takes dollars, a number above 0 (usd=2 or usd=0.5)",
  tokens: "tokens takes a whole number above 0, with k or M for thousands or millions (tokens=500k)",
  agentTurns: "agentTurns takes a whole number above 0 (agentTurns=20)",
  wallMs: "wallMs takes milliseconds, or a duration with ms, s, m or h (wallMs=600000 or wallMs=10m)",
};

const KEYS = `the limits are ${BUDGET_LIMITS.join(", ")}, as usd=2,tokens=500k`;

const UNITS: Readonly<Record<string, number>> = { "": 1, ms: 1, s: 1_000, m: 60_000, h: 3_600_000 };

function refuse(limit: BudgetLimit | null, why: string): BudgetFlagResult {
  return { ok: false, error: { code: "budget_invalid", limit, message: `Invalid --budget: ${why}.` } };
}

function isLimit(key: string): key is BudgetLimit {
  return (BUDGET_LIMITS as readonly string[]).includes(key);
}

/** A number with an optional suffix from `units`; null when it is not one. */
function scaled(text: string, units: Readonly<Record<string, number>>): number | null {
  const match = /^(\d+(?:\.\d+)?|\.\d+)([a-zA-Z]*)$/.exec(text);
  if (!match) return null;
  const factor = units[match[2] ?? ""];
  if (factor === undefined) return null;
  return Number(match[1]) * factor;
}

function limitValue(limit: BudgetLimit, text: string): number | null {
  switch (limit) {
    case "usd":
      return scaled(text.startsWith("$") ? text.slice(1) : text, { "": 1 });
    case "tokens": {
      const n = scaled(text, { "": 1, k: 1e3, K: 1e3, m: 1e6, M: 1e6 });
      return n === null ? null : Math.round(n * 1e6) / 1e6;
    }
    case "agentTurns":
      return scaled(text, { "": 1 });
    case "wallMs":
      return scaled(text, UNITS);
    default:
      return limit satisfies never;
  }
}

/**
 * Parse `usd=2,tokens=500k,agentTurns=20,wallMs=30m` (the `--budget` of `piw run`, `piw resume` and
 * `/workflow`). Every limit is optional, none may repeat, and at least one is given.
 */
export function parseBudgetFlag(text: string): BudgetFlagResult {
  if (text.length > FLAG_MAX_CHARS)
    return refuse(null, `the value is longer than ${FLAG_MAX_CHARS} characters`);
  const trimmed = text.trim();
  if (trimmed === "") return refuse(null, `it needs at least one limit; ${KEYS}`);
  const budget: Record<string, number> = {};
  for (const part of trimmed.split(",")) {
    const eq = part.indexOf("=");
    const key = (eq < 0 ? part : part.slice(0, eq)).trim();
    if (!isLimit(key)) return refuse(null, `each part is limit=value and ${KEYS}`);
    if (eq < 0) return refuse(key, FORMS[key]);
    if (budget[key] !== undefined) return refuse(key, `${key} is given twice`);
    const value = limitValue(key, part.slice(eq + 1).trim());
    if (value === null) return refuse(key, FORMS[key]);
    budget[key] = value;
  }
  const checked = budgetSchema.safeParse(budget);
  if (!checked.success) {
    const first = checked.error.issues[0]?.path[0];
    const limit = typeof first === "string" && isLimit(first) ? first : null;
    return refuse(limit, limit === null ? KEYS : FORMS[limit]);
  }
  return { ok: true, budget: checked.data };
}
