export type { FlowEntry, MountManifest, MountView } from "./flow.js";
export { activePath, enclosingMounts, flowEntries, flowOrder, mountView } from "./flow.js";
export { formatAge, formatDuration } from "./format.js";
export type { GraphOptions, RenderedGraph } from "./graph.js";
export { MIN_CARD_WIDTH, renderGraph } from "./graph.js";
export type { CardLayout, EdgeLayout, EdgeRoute, GraphLayout } from "./graph-layout.js";
export { CARD_GAP, layoutGraph } from "./graph-layout.js";
export type { Theme, Tint } from "./theme.js";
export { ansiTheme, plainTheme } from "./theme.js";
export type { WidgetOptions } from "./widget.js";
export { DEFAULT_WIDGET_LINES, renderFooterStatus, renderWidgetLines } from "./widget.js";
export type { ElementKind, NodeState, NodeStateWord, RunStateWord } from "./words.js";
export {
  KIND_GLYPHS,
  NODE_GLYPHS,
  NODE_STATE_WORDS,
  NODE_TINTS,
  RUN_GLYPHS,
  RUN_TINTS,
  runStateWord,
} from "./words.js";
