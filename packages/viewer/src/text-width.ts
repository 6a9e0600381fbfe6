import { truncateToWidth, visibleWidth } from "@earendil-works/pi-tui";

const ESCAPE = "\u001b";
// SGR and other CSI sequences, which pi-tui adds around the ellipsis when it cuts a line.
const CSI = new RegExp(`${ESCAPE}\\[[0-9;?]*[A-Za-z]`, "g");

/**
 * Cuts a line to `width` columns with an ellipsis. Plain text stays plain: pi-tui resets styles
 * around the ellipsis, which only makes sense when the line was styled in the first place.
 */
export function clipToWidth(text: string, width: number, ellipsis = "…"): string {
  if (visibleWidth(text) <= width) return text;
  const cut = truncateToWidth(text, Math.max(0, width), ellipsis);
  return text.includes(ESCAPE) ? cut : cut.replace(CSI, "");
}
