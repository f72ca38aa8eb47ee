import { describe, expect, it } from 'vitest';
import { floorLog2 } from '../../../src/engine/simulate/rounding.js';

/** Exact floor(log2(x)) by integer arithmetic, independent of the float tricks under test. */
function reference(x: number): number {
  return BigInt(x).toString(2).length - 1;
}

describe('simulate: floorLog2 is exact on every power-of-two boundary below 2^53', () => {
  it('matches the bit length at 2^k − 1, 2^k and 2^k + 1', () => {
    for (let k = 0; k < 53; k++) {
      for (const x of [2 ** k - 1, 2 ** k, 2 ** k + 1]) {
        if (x < 1) continue;
        expect(floorLog2(x), `x = ${x}`).toBe(reference(x));
      }
    }
  });

  it('matches on request-like sizes around the 2^32 switch', () => {
    for (const x of [2 ** 32 - 512, 2 ** 32 + 512, 3 * 2 ** 31, 2 ** 40 + 12345, 2 ** 53 - 1]) {
      expect(floorLog2(x), `x = ${x}`).toBe(reference(x));
    }
  });
});
