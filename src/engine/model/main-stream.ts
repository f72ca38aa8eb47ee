import type { DeviceModel, Snapshot } from './snapshot.js';

/**
 * The stream a request with no recorded stream is taken to be on (a dump-time check, a segment
 * the dump no longer holds). The allocator never hands a block to another stream, so this
 * matters: the device's only stream where it has one (torch_npu writes `aclrtStream` pointers,
 * never 0); else PyTorch's default stream 0 where a PyTorch file uses it; else the stream whose
 * segments reserve the most.
 */
export function mainStream(s: Snapshot, d: DeviceModel): number {
  const reserved = new Map<number, number>();
  for (const id of d.segmentIds) {
    const seg = s.tables.segments[id]!;
    reserved.set(seg.stream, (reserved.get(seg.stream) ?? 0) + seg.totalSize);
  }
  d.facts.streamsUsed.forEach((used, code) => {
    const raw = s.traceColumns.streams[code]!;
    if (used === 1 && !reserved.has(raw)) reserved.set(raw, 0);
  });
  if (reserved.size === 1) return [...reserved.keys()][0]!;
  if (s.producer.kind === 'pytorch' && reserved.has(0)) return 0;
  return [...reserved].sort((a, b) => b[1] - a[1] || a[0] - b[0])[0]?.[0] ?? 0;
}
