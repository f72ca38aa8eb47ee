import { describe, expect, it } from 'vitest';
import { generateSnapshotBytes } from '../../scripts/synth/index.js';
import { loadSnapshotBytes } from '../../src/engine/load/load.js';
import { flameTree } from '../../src/engine/views/flame/flame-tree.js';
import { frameLabel } from '../../web/src/flame/labels.js';

/**
 * The flame graph's labels tell frames apart: a generated GPT's model.py has a `forward` per
 * module, each a different line; those carry file:line, a name seen once stays bare.
 */
describe('flame graph labels', () => {
  const s = loadSnapshotBytes(generateSnapshotBytes({ events: 4000, seed: 23 }).bytes);
  const d = s.devices[0]!;

  it('frames whose names repeat are labelled with file:line, the others by name alone', () => {
    for (const full of [false, true]) {
      const t = flameTree(s, d, d.totals.peakAllocatedAt, { fullStacks: full });
      const count = new Map<string, number>();
      for (const f of t.frames) count.set(f.name, (count.get(f.name) ?? 0) + 1);
      const labels = new Map<number, string>();
      for (let i = 0; i < t.frame.length; i++)
        if (t.frame[i]! >= 0) labels.set(t.frame[i]!, frameLabel(t, i));
      const forwards = [...labels].filter(([f]) => t.frames[f]!.name === 'forward');
      expect(forwards.length, `full ${full}`).toBeGreaterThan(1);
      for (const [f, label] of forwards) {
        const frame = t.frames[f]!;
        expect(label).toBe(`forward (${frame.filename.split('/').pop()}:${frame.line})`);
      }
      // Labels name distinct Python frames apart.
      const python = [...labels].filter(([f]) => t.frames[f]!.filename.endsWith('.py')).map(([, l]) => l);
      expect(new Set(python).size).toBe(python.length);
      for (const [f, label] of labels)
        if (count.get(t.frames[f]!.name) === 1 && !t.frames[f]!.name.includes('('))
          expect(label).toBe(t.frames[f]!.name);
    }
  });
});
