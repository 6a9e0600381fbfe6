/** The soak's one source of chance: seeded, so a failing schedule can be run again. */
export interface SeededRandom {
  /** A number in [0, 1). */
  next(): number;
  /** An integer from `min` to `max`, both included. */
  between(min: number, max: number): number;
}

/** mulberry32: a small seeded generator. */
export function seededRandom(seed: number): SeededRandom {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return { next, between: (min, max) => min + Math.floor(next() * (max - min + 1)) };
}
