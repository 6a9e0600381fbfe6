import type { RunStore } from "./run-store.js";

/** What components that only read may hold (pi-mono's ReadonlySessionManager pattern). */
export type RunReader = Pick<
  RunStore,
  | "getRun"
  | "listRuns"
  | "findSessionReservation"
  | "findContinuation"
  | "readRunInput"
  | "readRunFinalOutput"
  | "readRunError"
  | "readPresentationInstructions"
  | "readTerminalFacts"
  | "readAnswerCheck"
  | "listRunSteps"
  | "listNodeProgress"
  | "readRunProgress"
  | "listRunEffects"
  | "listEffectListLengths"
  | "listRunWorkspaces"
  | "listRunEvents"
  | "readRunManifest"
  | "listOpenTurns"
  | "latestSettledTurn"
  | "countRunsByStatus"
  | "readBudgetState"
>;
