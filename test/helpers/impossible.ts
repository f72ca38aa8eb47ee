/**
 * Snapshots no allocator can produce, one impossibility each, for the tests and for
 * `node dist-tools/scripts/make-impossible.js DIR`: what memlens must warn about each, and that no
 * figure it prints goes below zero or beyond the total it is part of.
 *
 * Every case starts from one consistent snapshot (device 0: a 2 MiB small-pool segment holding a
 * 512 KiB tensor, a 20 MiB large-pool segment holding an 8 MiB one, a 1 MiB temporary allocated
 * and freed in the trace) and breaks one thing in it.
 */
import type { ViolationKind } from '../../src/engine/model/invariants.js';

const MiB = 1 << 20;
const KiB = 1 << 10;
const A = 0x7f0000000000;
const B = A + 32 * MiB;

type Block = {
  address: number;
  size: number;
  requested_size: number;
  state: string;
};
type SegmentValue = {
  device: number;
  address: number;
  total_size: number;
  stream: number;
  segment_type: string;
  blocks: Block[];
};
type Entry = {
  action: string;
  addr: number;
  size: number;
  stream: number;
  time_us: number;
};
export type SnapshotValue = {
  segments: SegmentValue[];
  device_traces: Entry[][];
};

export interface ImpossibleCase {
  name: string;
  /** What it breaks, in words. */
  says: string;
  value: SnapshotValue;
  /** The violation memlens must name, and the first offender it must name with it. */
  kind: ViolationKind | null;
  first: string;
  /** Refused: exit 2 with one line, as no figure would be honest. */
  refused: boolean;
}

function base(): SnapshotValue {
  const block = (address: number, size: number, requested: number, state: string): Block => ({
    address,
    size,
    requested_size: requested,
    state,
  });
  const e = (action: string, addr: number, size: number, t: number): Entry => ({
    action,
    addr,
    size,
    stream: 0,
    time_us: t,
  });
  return {
    segments: [
      {
        device: 0,
        address: A,
        total_size: 2 * MiB,
        stream: 0,
        segment_type: 'small',
        blocks: [
          block(A, 512 * KiB, 512 * KiB, 'active_allocated'),
          block(A + 512 * KiB, 1536 * KiB, 0, 'inactive'),
        ],
      },
      {
        device: 0,
        address: B,
        total_size: 20 * MiB,
        stream: 0,
        segment_type: 'large',
        blocks: [block(B, 8 * MiB, 8 * MiB, 'active_allocated'), block(B + 8 * MiB, 12 * MiB, 0, 'inactive')],
      },
    ],
    device_traces: [
      [
        e('segment_alloc', A, 2 * MiB, 10),
        e('alloc', A, 512 * KiB, 11),
        e('segment_alloc', B, 20 * MiB, 20),
        e('alloc', B, 8 * MiB, 21),
        e('alloc', B + 8 * MiB, MiB, 30),
        e('free_requested', B + 8 * MiB, MiB, 31),
        e('free_completed', B + 8 * MiB, MiB, 32),
      ],
    ],
  };
}

function broken(
  name: string,
  says: string,
  kind: ViolationKind | null,
  first: string,
  edit: (v: SnapshotValue) => void,
  refused = false,
): ImpossibleCase {
  const value = base();
  edit(value);
  return { name, says, value, kind, first, refused };
}

const seg = (v: SnapshotValue, i: number): SegmentValue => v.segments[i]!;

export function impossibleCases(): ImpossibleCase[] {
  return [
    broken(
      'negative-block-size',
      'a block of -512 KiB',
      'negative_block_size',
      'segment 0 block 0, size -512 KiB',
      (v) => {
        seg(v, 0).blocks[0]!.size = -512 * KiB;
      },
    ),
    broken(
      'negative-segment-size',
      'a segment of -20 MiB',
      'negative_segment_size',
      'segment 1, total_size -20.0 MiB',
      (v) => {
        seg(v, 1).total_size = -20 * MiB;
      },
    ),
    broken(
      'block-larger-than-segment',
      'an 8 MiB block in a 2 MiB segment',
      'block_larger_than_segment',
      'segment 0 block 1, size 8.00 MiB in a segment of 2.00 MiB',
      (v) => {
        seg(v, 0).blocks[1]!.size = 8 * MiB;
      },
    ),
    broken(
      'block-outside-segment',
      "a block 40 MiB past its segment's start",
      'block_outside_segment',
      'segment 1 block 1 at 0x7f0004800000',
      (v) => {
        seg(v, 1).blocks[1]!.address = B + 40 * MiB;
      },
    ),
    broken(
      'overlapping-blocks',
      'a block starting inside the one before it',
      'overlapping_blocks',
      'segment 1 block 1 at 0x7f0002400000, previous block ends at 0x7f0002800000',
      (v) => {
        seg(v, 1).blocks[1]!.address = B + 4 * MiB;
      },
    ),
    broken(
      'overlapping-segments',
      'the 20 MiB segment starts 1 MiB into the 2 MiB one',
      'overlapping_segments',
      'segment 1 at 0x7f0000100000 (20.0 MiB) inside segment 0',
      (v) => {
        const s = seg(v, 1);
        const shift = A + MiB - B;
        s.address += shift;
        for (const b of s.blocks) b.address += shift;
      },
    ),
    broken(
      'requested-beyond-block',
      'a 512 KiB block that requested 3 MiB',
      'requested_outside_block',
      'segment 0 block 0, requested 3.00 MiB of 512 KiB',
      (v) => {
        seg(v, 0).blocks[0]!.requested_size = 3 * MiB;
      },
    ),
    broken(
      'negative-trace-size',
      'the temporary allocated and freed as -302 MiB',
      'negative_trace_size',
      'device 0 entry 4, size -302 MiB',
      (v) => {
        for (const e of v.device_traces[0]!) if (e.addr === B + 8 * MiB) e.size = -302 * MiB;
      },
    ),
    broken(
      'nothing-possible',
      'one segment of -2 MiB and no trace',
      'negative_segment_size',
      'segment 0, total_size -2.00 MiB',
      (v) => {
        v.segments = [{ ...seg(v, 0), total_size: -2 * MiB, blocks: [] }];
        v.device_traces = [[]];
      },
      true,
    ),
  ];
}
