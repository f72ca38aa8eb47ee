import { describe, expect, it } from 'vitest';
import { generateSnapshotBytes } from '../../../../scripts/synth/index.js';
import { loadSnapshotBytes } from '../../../../src/engine/load/load.js';
import { convertWindow } from '../../../../src/engine/views/timeline/axis-window.js';
import { axisExtent } from '../../../../src/engine/views/timeline/timeline-axis.js';

/**
 * Switching the timeline's x axis keeps the window: entry positions and wall-time positions
 * convert through the trace's own time_us (the generator's times never fall, and several entries
 * can share a microsecond).
 */
describe('convertWindow', () => {
  const d = loadSnapshotBytes(generateSnapshotBytes({ events: 3000, seed: 5 }).bytes).devices[0]!;
  const t = d.trace.timeUs;
  const n = d.trace.length;

  it('an entry starts at its own time_us, and that time leads back to an entry of the same time', () => {
    for (const k of [0, 17, Math.floor(n / 2), n - 1]) {
      const [x0] = convertWindow(d, [k, k + 1], 'entry', 'time');
      expect(x0).toBe(t[k]);
      const [back] = convertWindow(d, [x0, x0 + 1], 'time', 'entry');
      expect(back).toBeLessThanOrEqual(k);
      expect(t[Math.floor(back)]).toBe(t[k]);
    }
  });

  it('a point inside an entry keeps its fraction of the entry, both ways', () => {
    let k = 100;
    while (!(t[k + 1]! > t[k]!)) k++;
    const mid = (t[k]! + t[k + 1]!) / 2;
    expect(convertWindow(d, [k + 0.5, k + 0.75], 'entry', 'time')[0]).toBe(mid);
    expect(convertWindow(d, [mid, t[k + 1]!], 'time', 'entry')[0]).toBeCloseTo(k + 0.5, 9);
  });

  it('the whole trace maps to the whole trace', () => {
    expect(convertWindow(d, [0, n], 'entry', 'time')).toEqual(axisExtent(d, 'time'));
    expect(convertWindow(d, axisExtent(d, 'time'), 'time', 'entry')).toEqual([0, n]);
    expect(convertWindow(d, [3, 9], 'entry', 'entry')).toEqual([3, 9]);
  });
});
