import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { generateSnapshotBytes } from '../../../../scripts/synth/index.js';
import { formatFrame } from '../../../../src/engine/derived/frames/short-path.js';
import { topUserFrame } from '../../../../src/engine/derived/frames/user-frames.js';
import { hasHistory } from '../../../../src/engine/derived/state/has-history.js';
import { loadSnapshotBytes } from '../../../../src/engine/load/load.js';
import { byteTicks, decimalTicks } from '../../../../src/engine/views/timeline/axis-ticks.js';
import { hoverFacts } from '../../../../src/engine/views/timeline/hover-facts.js';
import { oomMarks, traceStartUs } from '../../../../src/engine/views/timeline/timeline-axis.js';

const CORPUS = join(import.meta.dirname, '..', '..', '..', '..', '..', 'shared', 'corpus');
/** A corpus file whose trace is one `snapshot` marker: the dump and no history. */
const MARKER_ONLY = join(CORPUS, 'Yiyi_LLM-inference__oom_snapshot__61261a2.pickle');

/** What the timeline's axes, OOM marks and hover line are built from, on generated snapshots. */
describe('timeline axes, OOM marks and hover facts', () => {
  const s = loadSnapshotBytes(
    generateSnapshotBytes({ events: 6000, seed: 21, oomCause: 'exhaustion' }).bytes,
  );
  const d = s.devices[0]!;
  const n = d.trace.length;
  const peak = Math.max(...d.totals.reserved);

  it('byte ticks step by a power of two, in GiB on a large trace and MiB on a small one', () => {
    for (const top of [peak * 1.1, 3.3 * 2 ** 20, 700 * 2 ** 20, 78 * 2 ** 30]) {
      const ticks = byteTicks(top, 5);
      expect(ticks.length).toBeGreaterThanOrEqual(3);
      expect(ticks.length).toBeLessThanOrEqual(11);
      const step = ticks[1]! - ticks[0]!;
      expect(Math.log2(step) % 1).toBe(0);
      expect(ticks).toEqual(ticks.map((_, i) => i * step));
      expect(ticks.at(-1)!).toBeLessThanOrEqual(top);
    }
    expect(byteTicks(78 * 2 ** 30, 5)).toEqual([0, 16, 32, 48, 64].map((g) => g * 2 ** 30));
    expect(byteTicks(3.3 * 2 ** 20, 5)[1]).toBe(2 ** 19);
  });

  it('an entry axis ticks whole entries; fractional ticks carry no float noise', () => {
    expect(decimalTicks(0, 1, 8, true)).toEqual([0, 1]);
    expect(decimalTicks(0, n, 10, true).every(Number.isInteger)).toBe(true);
    const tenths = decimalTicks(0, 1, 10);
    expect(tenths).toContain(0.3);
    expect(tenths.every((v) => String(v).length <= 3)).toBe(true);
  });

  it('marks every oom entry, at the entry cursor and at its time', () => {
    const oomCode = s.traceColumns.actionNames.indexOf('oom');
    const expected = [...d.trace.action.subarray(0, n)].flatMap((a, k) => (a === oomCode ? [k] : []));
    expect(expected.length).toBeGreaterThan(0);
    expect(oomMarks(s, d, 'entry')).toEqual(expected.map((k) => ({ entry: k, x: k + 0.5 })));
    expect(oomMarks(s, d, 'time').map((m) => m.x)).toEqual(expected.map((k) => d.trace.timeUs[k]));
  });

  it('the hover names the allocation by size and user frame, at a time since the trace start', () => {
    const a = d.allocations;
    const id = [...Array(a.count).keys()].find((x) => a.stack[x]! >= 0 && a.start[x]! > 100)!;
    const facts = hoverFacts(s, d, a.start[id]!, id);
    expect(facts.allocation?.bytes).toBe(a.size[id]);
    const top = topUserFrame(s.stacks.frames(a.stack[id]!))!;
    expect(top.filename.endsWith('.py')).toBe(true);
    expect(facts.allocation?.frame).toBe(formatFrame(top));
    expect(facts.allocation?.frame?.startsWith(`${top.name} (`)).toBe(true);
    expect(facts.allocation?.frame).toContain(`${top.filename.split('/').pop()}:${top.line})`);
    expect(facts.since_start_us).toBe(d.trace.timeUs[a.start[id]!]! - traceStartUs(d)!);
    expect(facts.since_start_us!).toBeLessThan(1e12);
    expect(hoverFacts(s, d, 5, null).allocation).toBeNull();
  });

  it('a trace of snapshot markers alone, or none, has no history to draw', () => {
    expect(hasHistory(d)).toBe(true);
    const listed = loadSnapshotBytes(generateSnapshotBytes({ events: 500, seed: 2, legacy: 'list' }).bytes);
    expect(listed.devices.every((x) => x.trace.length === 0 && !hasHistory(x))).toBe(true);
    if (!existsSync(MARKER_ONLY)) return;
    const marked = loadSnapshotBytes(new Uint8Array(readFileSync(MARKER_ONLY))).devices[0]!;
    expect(marked.trace.length).toBeGreaterThan(0);
    expect(hasHistory(marked)).toBe(false);
  });
});
