/** Robust statistics for comparing cells of a run, where one odd rank must not move the yardstick. */

export function median(values: readonly number[]): number {
  if (values.length === 0) return Number.NaN;
  const v = [...values].sort((a, b) => a - b);
  const mid = v.length >> 1;
  return v.length % 2 === 1 ? v[mid]! : (v[mid - 1]! + v[mid]!) / 2;
}

/** Median absolute deviation, scaled to match a normal distribution's standard deviation. */
export function scaledMad(values: readonly number[], center = median(values)): number {
  return 1.4826 * median(values.map((v) => Math.abs(v - center)));
}

/**
 * How far a figure must be above its peers to stand out: five robust standard deviations, and
 * never less than `floor` (a share of the peers' median and a byte count), so identical ranks (a
 * spread of zero) do not turn batch-size noise into a finding.
 */
export function standOutThreshold(
  peers: readonly number[],
  floor: { share: number; bytes: number },
  center = median(peers),
): number {
  return Math.max(5 * scaledMad(peers, center), floor.share * Math.abs(center), floor.bytes);
}
