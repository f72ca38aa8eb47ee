/**
 * First index whose value is >= v in an ascending array (`above`: > v); the array's length when
 * none is.
 */
export function lowerBound(sorted: ArrayLike<number>, v: number, above = false): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (sorted[mid]! < v || (above && sorted[mid] === v)) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
