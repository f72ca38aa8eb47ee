import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { generateSnapshotBytes } from '../../../scripts/synth/generate.js';
import { pickleDumps } from '../../../src/engine/encode/pickle-writer.js';
import { loadSnapshotBytes } from '../../../src/engine/load/load.js';
import { FREED_BEFORE_WINDOW } from '../../../src/engine/model/allocations.js';
import { BlockState } from '../../../src/engine/model/segments.js';
import type { DeviceModel, Snapshot } from '../../../src/engine/model/snapshot.js';
import { Action } from '../../../src/engine/model/trace-columns.js';
import { impossibleCases } from '../../helpers/impossible.js';
import { CORPUS, corpusPickles, PAIRING_CASES } from '../../helpers/pairing-cases.js';

/**
 * The allocation table completes some columns on first read (addresses, streams, dump-time
 * blocks, each entry's allocation): they must be what pairing the trace entry by entry gives,
 * here by a plain Map-based pairing of the same rules, on files with every kind of odd pairing.
 */

interface Reference {
  start: number[];
  freeRequested: number[];
  end: number[];
  addr: number[];
  size: number[];
  stack: number[];
  stream: number[];
  block: number[];
  ofEntry: number[];
}

function referencePairing(s: Snapshot, d: DeviceModel): Reference {
  const t = d.trace;
  const n = t.length;
  const r: Reference = {
    start: [],
    freeRequested: [],
    end: [],
    addr: [],
    size: [],
    stack: [],
    stream: [],
    block: [],
    ofEntry: new Array(n).fill(-1),
  };
  const add = (start: number, addr: number, size: number, stack: number, stream: number) => {
    r.start.push(start);
    r.freeRequested.push(-1);
    r.end.push(-1);
    r.addr.push(addr);
    r.size.push(size);
    r.stack.push(stack);
    r.stream.push(stream);
    r.block.push(-1);
    return r.start.length - 1;
  };
  const orphan = (i: number) => add(-1, t.addr[i]!, t.size[i]!, -1, t.stream[i]!);
  const open = new Map<number, number>();
  for (let i = 0; i < n; i++) {
    const a = t.action[i]!;
    const addr = t.addr[i]!;
    let id: number;
    if (a === Action.alloc) {
      id = add(i, addr, t.size[i]!, t.stack[i]!, t.stream[i]!);
      const prev = open.get(addr);
      if (prev !== undefined) r.end[prev] = i;
      open.set(addr, id);
    } else if (a === Action.free_requested) {
      id = open.get(addr) ?? orphan(i);
      open.set(addr, id);
      r.freeRequested[id] = i;
    } else if (a === Action.free_completed || a === Action.free) {
      const known = open.get(addr);
      open.delete(addr);
      id = known ?? orphan(i);
      if (a === Action.free) r.freeRequested[id] = i;
      else if (known === undefined) r.freeRequested[id] = FREED_BEFORE_WINDOW;
      r.end[id] = i;
    } else continue;
    r.ofEntry[i] = id;
  }
  const { blocks } = s.tables;
  for (const seg of s.tables.segments) {
    if (seg.device !== d.device) continue;
    for (let k = seg.firstBlock; k < seg.firstBlock + seg.blockCount; k++) {
      const state = blocks.state[k];
      if (state !== BlockState.allocated && state !== BlockState.pendingFree) continue;
      let id = open.get(blocks.address[k]!);
      open.delete(blocks.address[k]!);
      if (id === undefined) {
        const stream = s.traceColumns.streams.indexOf(seg.stream);
        id = add(-1, blocks.address[k]!, blocks.requestedSize[k]!, blocks.stack[k]!, stream);
        if (state === BlockState.pendingFree) r.freeRequested[id] = FREED_BEFORE_WINDOW;
      }
      r.block[id] = k;
      r.end[id] = n;
    }
  }
  for (const id of open.values()) r.end[id] = n;
  return r;
}

function expectReferenceColumns(s: Snapshot): void {
  for (const d of s.devices) {
    const want = referencePairing(s, d);
    const a = d.allocations;
    expect(a.count).toBe(want.start.length);
    for (const key of Object.keys(want) as (keyof Reference)[])
      expect([key, Array.from(a[key])]).toEqual([key, want[key]]);
  }
}

const MiB = 1 << 20;
const A = 0x7f0000000000;

/** Every odd pairing in one trace: repeated free requests, an alloc over a live one, orphan frees. */
function oddPairings(): Uint8Array {
  const e = (action: string, addr: number, size: number) => ({ action, addr, size, stream: 0, time_us: 1 });
  return pickleDumps({
    segments: [
      {
        device: 0,
        address: A,
        total_size: 8 * MiB,
        stream: 0,
        segment_type: 'large',
        blocks: [
          { address: A, size: MiB, requested_size: MiB, state: 'active_allocated' },
          { address: A + MiB, size: MiB, requested_size: MiB, state: 'active_pending_free' },
          { address: A + 2 * MiB, size: 6 * MiB, requested_size: 0, state: 'inactive' },
        ],
      },
    ],
    device_traces: [
      [
        e('free_completed', A + 4 * MiB, MiB),
        e('free_requested', A + 5 * MiB, MiB),
        e('alloc', A + 2 * MiB, MiB),
        e('free_requested', A + 2 * MiB, MiB),
        e('free_requested', A + 2 * MiB, MiB),
        e('free', A + 2 * MiB, MiB),
        e('alloc', A + 3 * MiB, MiB),
        e('alloc', A + 3 * MiB, MiB),
        e('free_requested', A + 3 * MiB, MiB),
        e('free_completed', A + 3 * MiB, MiB),
        e('alloc', A, MiB),
        e('free_completed', A + 5 * MiB, MiB),
      ],
    ],
  });
}

describe('the allocation table columns completed on first read', () => {
  it('a trace of odd pairings', () => expectReferenceColumns(loadSnapshotBytes(oddPairings())));
  for (const [name, options] of PAIRING_CASES)
    it(name, () => expectReferenceColumns(loadSnapshotBytes(generateSnapshotBytes(options).bytes)));
  it('the impossible snapshots', () => {
    for (const c of impossibleCases().filter((c) => !c.refused))
      expectReferenceColumns(loadSnapshotBytes(pickleDumps(c.value)));
  });
  it.skipIf(corpusPickles.length === 0)('every corpus file', () => {
    for (const f of corpusPickles)
      expectReferenceColumns(loadSnapshotBytes(new Uint8Array(readFileSync(join(CORPUS, f)))));
  });
});
