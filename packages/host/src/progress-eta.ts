import type { NodeProgress } from "@piw/protocol";

/** One saved reading of a visit's `done`. */
export interface EtaSample {
  at: number;
  done: number;
}

export type Eta = NonNullable<NodeProgress["eta"]>;

/** How far the later half's rate may differ from the earlier half's for the rate to count as steady. */
const STEADY_TOLERANCE = 0.25;

function rateBetween(from: EtaSample, to: EtaSample): number {
  return to.at > from.at ? (to.done - from.done) / (to.at - from.at) : 0;
}

/**
 * When a visit will be done, from its saved readings (oldest first, the attempt's first one among
 * them) and its latest `total`. The rate is `done` gained per millisecond from the first reading to
 * the latest; the ETA is the latest reading's time plus what is left at that rate.
 *
 * - null: `total` is unknown, or there is no rate yet (one reading, no time between readings, or
 *   nothing gained since the first).
 * - Everything done: the latest reading's time, `high`.
 * - `low`: fewer than 3 readings, or less than 10% done.
 * - `high`: at least 5 readings and a steady rate: the rate over the later half of the readings is
 *   within 25% of the rate over the earlier half.
 * - `medium`: otherwise.
 */
export function estimateEta(samples: readonly EtaSample[], total: number | null): Eta | null {
  const first = samples[0];
  const last = samples[samples.length - 1];
  if (total === null || first === undefined || last === undefined) return null;
  if (last.done >= total) return { at: last.at, confidence: "high" };
  const rate = rateBetween(first, last);
  if (rate <= 0) return null;
  const at = Math.round(last.at + (total - last.done) / rate);
  if (samples.length < 3 || last.done < total * 0.1) return { at, confidence: "low" };
  const middle = samples[Math.floor((samples.length - 1) / 2)] as EtaSample;
  const earlier = rateBetween(first, middle);
  const later = rateBetween(middle, last);
  const steady =
    samples.length >= 5 &&
    earlier > 0 &&
    later > 0 &&
    Math.abs(later - earlier) <= STEADY_TOLERANCE * Math.max(earlier, later);
  return { at, confidence: steady ? "high" : "medium" };
}
