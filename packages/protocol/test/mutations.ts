// Seeded mutations for holding a zod-free quick check to the schema it stands in for.

/** Values every quick check meets: wrong types, bounds and shapes. */
export const COMMON_BAD: readonly unknown[] = [
  undefined,
  null,
  0,
  -1,
  1.5,
  2 ** 53,
  "",
  "x",
  "x".repeat(4097),
  true,
  {},
  [],
];

/** A small seeded generator (mulberry32): the same mutations on every run. */
function seeded(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Every place in `value` (by its path of keys), with a setter that returns a copy with it replaced. */
function places(value: unknown, replace: (v: unknown) => unknown, out: ((v: unknown) => unknown)[]): void {
  out.push(replace);
  if (Array.isArray(value)) {
    value.forEach((item, i) => {
      places(item, (v) => replace(value.map((x, j) => (j === i ? v : x))), out);
    });
  } else if (typeof value === "object" && value !== null) {
    for (const [key, inner] of Object.entries(value))
      places(inner, (v) => replace({ ...value, [key]: v }), out);
    // A key the quick check does not know.
    out.push((v) => replace({ ...value, added: v }));
  }
}

/**
 * Hands `check` every single-place mutation of `sample` by each of `bad`, then `pairs` mutations of two
 * places at once, drawn from a generator seeded with `seed`: the same values on every run.
 */
export function eachMutation(
  sample: unknown,
  bad: readonly unknown[],
  { seed, pairs }: { seed: number; pairs: number },
  check: (mutated: unknown) => void,
): void {
  const random = seeded(seed);
  const pick = <T>(items: readonly T[]): T | undefined => items[Math.floor(random() * items.length)];
  const setters: ((v: unknown) => unknown)[] = [];
  places(sample, (v) => v, setters);
  for (const set of setters) for (const value of bad) check(set(value));
  for (let i = 0; i < pairs; i += 1) {
    const first = pick(setters);
    if (first === undefined) continue;
    const once = first(pick(bad));
    const again: ((v: unknown) => unknown)[] = [];
    places(once, (v) => v, again);
    const second = pick(again);
    if (second !== undefined) check(second(pick(bad)));
  }
}

/**
 * Runs `eachMutation` over `sample`, each mutation first through JSON (the peer checks parsed frames
 * only), and expects `hold` (true when the quick check took it, after asserting the schema agrees) to
 * take some mutations but not most: a check that takes nothing or everything is not being tested.
 */
export function expectMutationsHeld(
  sample: unknown,
  bad: readonly unknown[],
  seed: number,
  hold: (value: unknown) => boolean,
): void {
  let tried = 0;
  let taken = 0;
  eachMutation(sample, bad, { seed, pairs: 3_000 }, (mutated) => {
    tried += 1;
    const text = JSON.stringify(mutated);
    if (hold(text === undefined ? undefined : JSON.parse(text))) taken += 1;
  });
  if (tried <= 3_000 || taken <= 20 || taken >= tried / 2) {
    throw new Error(`mutations: ${taken} of ${tried} taken; expected over 3,000 tried and 21 to half taken`);
  }
}
