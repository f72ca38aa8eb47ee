/**
 * formatCount groups integers itself (a first Intl.NumberFormat costs ~10 ms of every command's
 * start): it must write every count exactly as Intl's en-US formatter does.
 */
import { describe, expect, it } from 'vitest';
import { formatCount } from '../../../src/engine/base/format.js';
import { rng } from '../../helpers/rng.js';

const intl = new Intl.NumberFormat('en-US');

describe('formatCount', () => {
  it('writes edge values as Intl en-US does', () => {
    const edges = [0, -0, 1, -1, 7, 999, 1000, -1000, 999_999, 1_000_000, 123_456_789, -123_456_789];
    const beyond = [Number.MAX_SAFE_INTEGER, -Number.MAX_SAFE_INTEGER, 2 ** 53, 2 ** 64, 1e21, 1.5, -2.25];
    const odd = [0.0001, 1234.5678, Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY];
    for (const n of [...edges, ...beyond, ...odd]) expect(formatCount(n), String(n)).toBe(intl.format(n));
  });

  it('writes 20,000 random integers of every width as Intl en-US does', () => {
    const r = rng(25);
    for (let k = 0; k < 20_000; k++) {
      const digits = 1 + (k % 16);
      const n = (r(2) === 0 ? -1 : 1) * Math.floor((r(1 << 30) / 2 ** 30) * 10 ** digits);
      expect(formatCount(n)).toBe(intl.format(n));
    }
  });
});
