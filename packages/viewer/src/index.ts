export { agentCostLines, agentSessions, stepTranscriptLines } from "./agent-session-lines.js";
export { ANSWERED_BY_WORDS, answerExample, quotedExample } from "./answer-example.js";
export { clockWords, formatDueTime, recoveryWords } from "./clock-words.js";
export { describeConflict } from "./conflict.js";
export type { FlowEntry, MountManifest, MountView } from "./flow.js";
export { activePath, enclosingMounts, flowEntries, flowOrder, mountView } from "./flow.js";
export { formatAge, formatDuration, formatTimeLeft } from "./format.js";
export type { BoxGlyphs, Glyphs } from "./glyphs.js";
export {
  ASCII_GLYPHS,
  detectGlyphs,
  KIND_GLYPHS,
  NODE_GLYPHS,
  RUN_GLYPHS,
  UNICODE_GLYPHS,
} from "./glyphs.js";
export type { GraphOptions, RenderedGraph } from "./graph.js";
export { MIN_CARD_WIDTH, naturalGraphWidth, renderGraph } from "./graph.js";
export type { CardLayout, EdgeLayout, EdgeRoute, GraphLayout } from "./graph-layout.js";
export { CARD_GAP, layoutGraph } from "./graph-layout.js";
export type { InspectorOptions } from "./inspector.js";
export { renderInspector } from "./inspector.js";
export type { JsonLinesOptions } from "./json-lines.js";
export { jsonLines } from "./json-lines.js";
export { describeEvent, historyAt, replayView, stepReplay } from "./replay.js";
export { hasRunningWork, isRunLive, runHeader, timelineLine } from "./run-header.js";
export type { RunFilter, RunTableOptions } from "./run-list.js";
export { DURATION_BAR_WIDTH, durationBar, filterRuns, RUN_FILTERS, renderRunTable } from "./run-list.js";
export type { ScreenOptions, ScreenSize } from "./screen.js";
export {
  KEY_MAP,
  MIN_SCREEN,
  renderScreen,
  renderSnapshot,
  SPLIT_MIN_PANE,
  SPLIT_MIN_WIDTH,
  splitGraphWidth,
} from "./screen.js";
export { clipToWidth } from "./text-width.js";
export type { Theme, Tint } from "./theme.js";
export { ansiTheme, plainTheme } from "./theme.js";
export type { ViewerAppOptions, ViewerSource } from "./viewer-app.js";
export { needsTick, runViewerApp, viewerKeyOf } from "./viewer-app.js";
export type {
  ConnectionState,
  OpenRun,
  ViewerAction,
  ViewerKey,
  ViewerRequest,
  ViewerState,
  ViewerStep,
} from "./viewer-state.js";
export { focusPath, initialState, reduceViewer, SPLIT_STEP } from "./viewer-state.js";
export type { WidgetOptions } from "./widget.js";
export { DEFAULT_WIDGET_LINES, renderFooterStatus, renderWidgetLines } from "./widget.js";
export type { ElementKind, NodeState, NodeStateWord, RunStateWord } from "./words.js";
export { NODE_STATE_WORDS, NODE_TINTS, RUN_TINTS, runStateText, runStateWord } from "./words.js";
