import { describe, expect, it } from 'vitest';
import { AddrMap } from '../../../src/engine/model/addr-map.js';
import { rng } from '../../helpers/fuzz.js';

describe('AddrMap', () => {
  it('agrees with a JS Map over 200k random set/put/get/delete/take of CUDA-like addresses', () => {
    const r = rng(42);
    const ours = new AddrMap(4);
    const ref = new Map<number, number>();
    // Few distinct keys, so deletes hit and probe runs wrap around the table.
    const keys = Array.from({ length: 3000 }, () => 0x7f0000000000 + Math.floor(r() * 2 ** 30) * 512);
    for (let step = 0; step < 200_000; step++) {
      const key = keys[Math.floor(r() * keys.length)]!;
      const op = r();
      if (op < 0.25) {
        ours.set(key, step);
        ref.set(key, step);
      } else if (op < 0.45) {
        expect(ours.put(key, step)).toBe(ref.get(key));
        ref.set(key, step);
      } else if (op < 0.6) {
        ours.delete(key);
        ref.delete(key);
      } else if (op < 0.8) {
        expect(ours.take(key)).toBe(ref.get(key));
        ref.delete(key);
      } else {
        expect(ours.get(key)).toBe(ref.get(key));
      }
      expect(ours.size).toBe(ref.size);
    }
    const values: number[] = [];
    ours.forEachValue((v) => values.push(v));
    expect(values.sort((a, b) => a - b)).toEqual([...ref.values()].sort((a, b) => a - b));
  });
});
