/** How many code points `text` has: an emoji is one, as a reader counts it, not two UTF-16 units. */
export function codePointLength(text: string): number {
  let count = 0;
  for (const _ of text) count += 1;
  return count;
}
