/** Deterministic xorshift: rng(seed)(n) is an int in [0, n), so a failure names a reproducible seed. */
export function rng(seed: number): (n: number) => number {
  let x = seed >>> 0 || 1;
  return (n) => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return (x >>> 0) % n;
  };
}
