import type { StackTable } from '../model/stack-table.js';
import type { Memo } from './memo.js';
import { FrameDict } from './special-values.js';

/** What stackOfFrameRefs returns when a reference is not to a frame dict. */
export const NOT_FRAMES = -2;

/**
 * The stack id of a traceback written as memo references (`refs`, memo indices) to frame dicts
 * read earlier, or NOT_FRAMES if one of them is anything else (the VM then reads it its own way).
 */
export function stackOfFrameRefs(memo: Memo, stacks: StackTable, refs: ArrayLike<number>, n: number): number {
  const frames = new Int32Array(n);
  for (let i = 0; i < n; i++) {
    const v = memo.get(refs[i]! >>> 0);
    if (!(v instanceof FrameDict)) return NOT_FRAMES;
    frames[i] = v.intern(stacks);
  }
  return stacks.internStack(frames, n);
}
