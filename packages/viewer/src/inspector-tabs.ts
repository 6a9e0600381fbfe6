import { visibleWidth } from "@earendil-works/pi-tui";
import type { Theme } from "./theme.js";

/** What the inspector shows of the chosen node: its visits, its agent's messages, the trace, the run. */
export type InspectorTab = "steps" | "conversation" | "trace" | "info";

/** The tabs in the order the bar shows them and the keys 1 to 4 choose them. */
const INSPECTOR_TABS: readonly InspectorTab[] = ["steps", "conversation", "trace", "info"];

const TAB_TITLES: Record<InspectorTab, string> = {
  steps: "Steps",
  conversation: "Conversation",
  trace: "Trace",
  info: "Info",
};

/** The tab after (or before, for a negative `delta`) `tab`, wrapping around. */
export function cycleTab(tab: InspectorTab, delta: number): InspectorTab {
  const n = INSPECTOR_TABS.length;
  const at = (INSPECTOR_TABS.indexOf(tab) + delta + n) % n;
  return INSPECTOR_TABS[at] ?? "steps";
}

interface TabCell {
  tab: InspectorTab;
  text: string;
  from: number;
  to: number;
}

/** Where each tab's title sits on the bar: the mouse chooses a tab by its column. */
function tabCells(): TabCell[] {
  const cells: TabCell[] = [];
  let x = 0;
  INSPECTOR_TABS.forEach((tab, i) => {
    const text = ` ${i + 1} ${TAB_TITLES[tab]} `;
    const width = visibleWidth(text);
    cells.push({ tab, text, from: x, to: x + width });
    x += width + 1;
  });
  return cells;
}

/** ` 1 Steps │ 2 Conversation │ …` with the shown tab in inverse: one line atop the inspector. */
export function tabBar(active: InspectorTab, theme: Theme, separator: string): string {
  return tabCells()
    .map((cell) => (cell.tab === active ? theme("inverse", cell.text) : theme("dim", cell.text)))
    .join(theme("dim", separator));
}

/** The tab whose title is at `column` of the bar, if any. */
export function tabAt(column: number): InspectorTab | undefined {
  return tabCells().find((cell) => column >= cell.from && column < cell.to)?.tab;
}
