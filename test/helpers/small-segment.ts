/**
 * A hand-made snapshot's one 2 MiB small-pool segment (device 0, stream 0): the given blocks
 * from its start, then one inactive block over the rest.
 */
export function smallSegment(base: number, blocks: { state: string; requested: number; size: number }[]) {
  const total = 2 << 20;
  let at = base;
  const list = blocks.map((b) => {
    const block = { address: at, size: b.size, requested_size: b.requested, state: b.state };
    at += b.size;
    return block;
  });
  list.push({ address: at, size: total - (at - base), requested_size: 0, state: 'inactive' });
  return { device: 0, address: base, total_size: total, stream: 0, segment_type: 'small', blocks: list };
}
