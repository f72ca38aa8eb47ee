/**
 * The cursor that finds an entry's iteration for entries asked in about ascending order (leaks'
 * survivors, the GC bursts' ages) must answer as the binary search does, in any order.
 */
import { describe, expect, it } from 'vitest';
import {
  type Iterations,
  iterationAt,
  iterationCursor,
} from '../../../../src/engine/derived/iterations/iterations.js';

function iterations(starts: number[]): Iterations {
  return {
    source: 'annotation',
    marker: 'test',
    count: starts.length,
    start: Int32Array.from(starts),
    end: Int32Array.from(starts, (s, k) => starts[k + 1] ?? s + 10),
    names: starts.map((_, k) => `#${k}`),
    complete: starts.length,
    tried: [],
  };
}

describe('iterationCursor', () => {
  const ascending = Array.from({ length: 120 }, (_, i) => i - 5);
  const orders: [string, number[]][] = [
    ['ascending', ascending],
    ['descending', [...ascending].reverse()],
    ['jumping about', ascending.map((_, i) => ((i * 37) % 120) - 5)],
    ['repeated', [3, 3, 40, 40, 2, 2, 90, 90, -1, 200]],
  ];
  for (const starts of [[], [0], [10, 20, 35, 60, 61, 100]])
    for (const [name, entries] of orders)
      it(`${starts.length} iterations, entries ${name}`, () => {
        const it = iterations(starts);
        const at = iterationCursor(it);
        expect(entries.map((i) => at(i))).toEqual(entries.map((i) => iterationAt(it, i)));
      });
});
