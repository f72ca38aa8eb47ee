export interface Spread {
  min: number;
  median: number;
  max: number;
}

/** Smallest, median and largest of the values; null for none. */
export function spread(values: number[]): Spread | null {
  if (values.length === 0) return null;
  const sorted = Float64Array.from(values).sort();
  return { min: sorted[0]!, median: sorted[sorted.length >> 1]!, max: sorted[sorted.length - 1]! };
}
