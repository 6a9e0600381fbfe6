import type { JoinPolicy } from "@piw/protocol";

export type JoinState = "pending" | "satisfied" | "impossible";

/** How many branches of `total` must succeed for the join. */
export function joinNeeds(join: JoinPolicy, total: number): number {
  switch (join.kind) {
    case "all":
      return total;
    case "any":
      return 1;
    case "atLeast":
      return join.count;
    default:
      return join satisfies never;
  }
}

/** Pure: whether enough branches succeeded, or too many failed for the join ever to be satisfied. */
export function joinState(join: JoinPolicy, total: number, succeeded: number, failed: number): JoinState {
  const need = joinNeeds(join, total);
  if (succeeded >= need) return "satisfied";
  return failed > total - need ? "impossible" : "pending";
}
