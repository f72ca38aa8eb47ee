import { liveAllocated } from '../analyses/peak/peak.js';
import type { DeviceModel, Snapshot } from '../model/snapshot.js';

/** speedscope's file format (https://www.speedscope.app/file-format-schema.json), the parts used. */
export interface SpeedscopeFile {
  $schema: string;
  shared: { frames: { name: string; file?: string; line?: number }[] };
  profiles: {
    type: 'sampled';
    name: string;
    unit: 'bytes';
    startValue: number;
    endValue: number;
    samples: number[][];
    weights: number[];
  }[];
  name: string;
  exporter: string;
}

/**
 * The allocations live after entry `at` as a speedscope "sampled" profile weighted by bytes: one
 * sample per allocating stack (outermost frame first, as speedscope wants), so its flame graph
 * and sandwich views show where live memory was allocated. Opens offline in speedscope.
 */
export function liveMemoryProfile(s: Snapshot, d: DeviceModel, at: number, name: string): SpeedscopeFile {
  const bytesByStack = new Map<number, number>();
  for (const id of liveAllocated(d, at)) {
    const stack = d.allocations.stack[id]!;
    bytesByStack.set(stack, (bytesByStack.get(stack) ?? 0) + d.allocations.size[id]!);
  }
  const frameIndex = new Map<number, number>();
  const frames: SpeedscopeFile['shared']['frames'] = [];
  const indexOf = (frame: number): number => {
    let i = frameIndex.get(frame);
    if (i === undefined) {
      const f = s.stacks.frame(frame);
      i = frames.length;
      frames.push({ name: f.name || '(unnamed)', file: f.filename, line: f.line });
      frameIndex.set(frame, i);
    }
    return i;
  };
  const unknown = (): number => {
    frames.push({ name: '(allocated before recording or without a stack)' });
    return frames.length - 1;
  };
  const samples: number[][] = [];
  const weights: number[] = [];
  for (const [stack, bytes] of bytesByStack) {
    const ids = [...s.stacks.stack(stack)].reverse();
    samples.push(ids.length > 0 ? ids.map(indexOf) : [unknown()]);
    weights.push(bytes);
  }
  const total = weights.reduce((a, b) => a + b, 0);
  return {
    $schema: 'https://www.speedscope.app/file-format-schema.json',
    shared: { frames },
    profiles: [{ type: 'sampled', name, unit: 'bytes', startValue: 0, endValue: total, samples, weights }],
    name,
    exporter: 'memlens',
  };
}
