/**
 * The decoder learns the key shape of the first trace entry and reads later entries by comparing
 * bytes (src/engine/decode/entry-shape.ts). A trace whose entries change shape at random (key
 * order, missing or extra keys, None or shared frame lists, inline strings, values of other
 * widths) must decode exactly as the same value given as JSON, which the VM's fast path never sees.
 */
import { describe, expect, it } from 'vitest';
import type { PyValue } from '../../../src/engine/encode/pickle-values.js';
import { loadSnapshotBytes } from '../../../src/engine/load/load.js';
import { rng } from '../../helpers/rng.js';
import { snapshotOf } from '../../helpers/snapshot-of.js';
import { columns } from '../../helpers/trace-columns.js';

type Entry = Record<string, PyValue>;

const STREAMS = [0, 0x55d0c0ffee00, 7];
const ACTIONS = ['alloc', 'free_requested', 'free_completed', 'segment_alloc', 'snapshot'];

function entry(r: (n: number) => number, i: number, stacks: Entry[][]): Entry {
  const frames = (): PyValue => {
    const pick = r(4);
    if (pick === 0) return null;
    if (pick === 1 && stacks.length > 0) return stacks[r(stacks.length)]!; // the same list object: a memo reference
    const fresh = [{ filename: `m${r(3)}.py`, line: r(500), name: `f${r(5)}` }];
    stacks.push(fresh);
    return fresh;
  };
  const e: Entry = {
    action: ACTIONS[r(ACTIONS.length)]!,
    addr: r(2) === 0 ? 0x7f0000000000 + r(1 << 20) * 512 : r(256),
    size: r(3) === 0 ? 2 ** 40 + r(1000) : r(1 << 30),
    stream: STREAMS[r(STREAMS.length)]!,
    time_us: 1_700_000_000_000_000 + i * 10 + r(10),
    frames: frames(),
  };
  if (r(8) === 0) delete e.time_us;
  if (r(10) === 0) e.compile_context = `ctx${r(3)}`;
  if (r(12) === 0) e.user_metadata = r(2) === 0 ? '' : `meta${r(2)}`;
  if (r(15) === 0) e.surprise_key = r(100);
  if (r(6) === 0) return Object.fromEntries(Object.entries(e).reverse());
  return e;
}

function traceOf(seed: number, n: number): Entry {
  const r = rng(seed);
  const stacks: Entry[][] = [];
  const trace = Array.from({ length: n }, (_, i) => entry(r, i, stacks));
  return { segments: [], device_traces: [trace] };
}

describe('trace entries whose shape changes from one entry to the next', () => {
  for (const seed of [1, 2, 3, 4, 5]) {
    for (const protocol of [2, 4] as const) {
      it(`seed ${seed}, protocol ${protocol}: decodes as the same trace given as JSON`, () => {
        const value = traceOf(seed, 400);
        const json = loadSnapshotBytes(new TextEncoder().encode(JSON.stringify(value)));
        expect(columns(snapshotOf(value, protocol))).toEqual(columns(json));
      });
    }
  }
});
