export { agentCostLines, agentSessions, stepTranscriptLines } from "./agent-session-lines.js";
export { ANSWERED_BY_WORDS, answerExample, quotedExample } from "./answer-example.js";
export { budgetWords } from "./budget-words.js";
export { clockWords, formatDueTime, recoveryWords } from "./clock-words.js";
export { describeConflict } from "./conflict.js";
export { flowEntries } from "./flow.js";
export { joinWords } from "./forks.js";
export { formatAge, formatDuration, formatTimeLeft } from "./format.js";
export {
  ASCII_GLYPHS,
  detectGlyphs,
  NODE_GLYPHS,
  RUN_GLYPHS,
  UNICODE_GLYPHS,
} from "./glyphs.js";
export { naturalGraphWidth, renderGraph } from "./graph.js";
export { layoutGraph } from "./graph-layout.js";
export { renderInspector } from "./inspector.js";
export {
  agentProgressText,
  agentProgressWords,
  etaWords,
  nodeProgressOf,
  progressCount,
  progressWords,
  runningDetail,
  runProgressWords,
} from "./progress-words.js";
export { jsonLines } from "./json-lines.js";
export { describeEvent, historyAt, replayView, stepReplay } from "./replay.js";
export { renderRunTable } from "./run-list.js";
export {
  renderScreen,
  renderSnapshot,
  SPLIT_MIN_PANE,
  screenTarget,
  splitGraphWidth,
  splitShiftAt,
} from "./screen.js";
export type { Tint } from "./theme.js";
export { clipToWidth } from "./text-width.js";
export { ansiTheme, plainTheme } from "./theme.js";
export type { ViewerSource } from "./viewer-app.js";
export { needsTick, runViewerApp, viewerKeyOf } from "./viewer-app.js";
export type {
  ViewerAction,
  ViewerKey,
  ViewerRequest,
  ViewerState,
} from "./viewer-state.js";
export { initialState, reduceViewer } from "./viewer-state.js";
export { renderFooterStatus, renderWidgetLines } from "./widget.js";
export type { RunStateWord } from "./words.js";
export { NODE_STATE_WORDS, NODE_TINTS, RUN_TINTS, runStateText, runStateWord } from "./words.js";
