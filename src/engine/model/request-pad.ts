/**
 * torch_npu's request pad, read from the file where it can be. `AddPadSize()` (Ascend/pytorch
 * 9e73e70, torch_npu/csrc/core/npu/NPUCachingAllocator.cpp:161-173) is 32 bytes, or 0 on Ascend950
 * with CANN >= 9.1.0 (`kMinDel32PaddingSizeCannVersion`, line 111); the file names neither the chip
 * nor CANN. `round_size` (line 2202) adds the pad before the 512-byte rounding, so every allocated
 * block holds at least ceil512(requested_size + pad) bytes (splitting and rounding only add).
 * One block smaller than that for pad 32 proves the pad is 0.
 */
import { BlockState, type SegmentTables } from './segments.js';

export interface RequestPad {
  bytes: number;
  /** What decided, in words. */
  from: string;
}

const NPU_PAD = 32;
const MIN_BLOCK = 512;

const ceil512 = (n: number): number => MIN_BLOCK * Math.ceil(n / MIN_BLOCK);

export function npuRequestPad(tables: SegmentTables): RequestPad {
  if (!tables.blockKeys.includes('requested_size'))
    return { bytes: NPU_PAD, from: 'assumed: the blocks carry no requested_size' };
  const b = tables.blocks;
  let padded = -1;
  for (let i = 0; i < b.length; i++) {
    const requested = b.requestedSize[i]!;
    if (b.state[i] !== BlockState.allocated || requested <= 0) continue;
    const size = b.size[i]!;
    if (size < ceil512(requested + NPU_PAD))
      return {
        bytes: 0,
        from: `a ${requested} B request holds a ${size} B block, less than 32 B of pad allows`,
      };
    if (padded < 0 && size === ceil512(requested + NPU_PAD) && size > ceil512(requested)) padded = i;
  }
  if (padded < 0)
    return {
      bytes: NPU_PAD,
      from: 'assumed: no block tells 32 from 0 (0 only on Ascend950 with CANN >= 9.1)',
    };
  const r = b.requestedSize[padded]!;
  return { bytes: NPU_PAD, from: `a ${r} B request holds a ${b.size[padded]} B block` };
}

/**
 * A block only a padding allocator makes, in words; null if none. In the small pool both
 * allocators split off any remainder of 512 bytes or more (`should_split`), so a block there is
 * exactly its rounded request; a pool that never splits (`no_split_pools`, a MemPool's) holds whole
 * 2 MiB blocks, an even multiple of 512. `roundup_power2_divisions` rounds to steps of 512 (then
 * to ceil512(requested) itself) or of 1024 and more (even multiples). So a block that is an odd
 * multiple of 512 at ceil512(requested + 32), above ceil512(requested), is torch_npu's pad:
 * PyTorch's CUDA allocator adds none.
 */
export function paddedSmallBlock(tables: SegmentTables): string | null {
  if (!tables.blockKeys.includes('requested_size')) return null;
  const b = tables.blocks;
  for (let i = 0; i < b.length; i++) {
    const requested = b.requestedSize[i]!;
    const size = b.size[i]!;
    if (b.state[i] !== BlockState.allocated || requested <= 0 || (size / MIN_BLOCK) % 2 !== 1) continue;
    if (tables.segments[b.segment[i]!]?.pool !== 'small') continue;
    if (size === ceil512(requested + NPU_PAD) && size > ceil512(requested))
      return `a ${requested} B request in a ${size} B small-pool block (a 32-byte pad)`;
  }
  return null;
}
