import { SnapshotError } from '../base/errors.js';
import { STACK_HASH_SEED, type StackTable, stackHashStep } from '../model/stack-table.js';
import { describeValue, isDict, newDict, type PyDict, shortText } from '../values/py-values.js';

/**
 * Values the decoder puts on its stack in place of plain dicts/lists where the snapshot's shape
 * lets it skip building JS objects: trace entries go straight into columns, frames and tracebacks
 * into the stack table. Anything that ends up somewhere unexpected is turned back into a plain
 * value (`toPlain`), so the fast path never changes what a file decodes to.
 */

/** A trace entry dict being filled: its fields live in row `row` of the trace columns. */
export class OpenEntry {
  constructor(readonly row: number) {}
}

/** Consecutive trace entries in rows first..first+count-1, read as one run (see EntryBatches). */
export class EntryRun {
  constructor(
    readonly first: number,
    readonly count: number,
  ) {}
}

/** What the memo holds for a trace entry: PyTorch never refers back to one. */
export const ENTRY_IN_MEMO = Object.freeze({ entryInMemo: true });

/**
 * A frame dict ({filename, line, name}); interned into the stack table on first use. It keeps the
 * dict as written too, so a dict that merely looked like a frame decodes to exactly what it was.
 */
export class FrameDict {
  readonly dict: PyDict = newDict();
  id = -1;

  set(key: string, value: unknown): void {
    this.dict[key] = value;
  }

  intern(stacks: StackTable): number {
    if (this.id >= 0) return this.id;
    const { filename, line, name, ...rest } = this.dict;
    const extra = Object.keys(rest).length > 0 ? Object.assign(newDict(), rest) : undefined;
    this.id = stacks.internFrame(asText(filename), typeof line === 'number' ? line : 0, asText(name), extra);
    return this.id;
  }
}

function asText(v: unknown): string {
  return v === undefined ? '' : shortText(v);
}

/** A `frames` list still receiving frame dicts. */
export class OpenStack {
  ids: number[] = [];
  hash = STACK_HASH_SEED;
  memoSlot = -1;

  add(frameId: number): void {
    this.ids.push(frameId);
    this.hash = stackHashStep(this.hash, frameId);
  }
}

/** A plain list of frame dicts (JSON input, or a list the VM did not see as 'frames') → stack id. */
export function internFrameList(frames: unknown[], stacks: StackTable, offset: number): number {
  const ids = frames.map((f) => frameIdOf(f, stacks, offset));
  return stacks.internStack(ids, ids.length);
}

export function frameIdOf(item: unknown, stacks: StackTable, offset: number): number {
  if (item instanceof FrameDict) return item.intern(stacks);
  if (isDict(item)) {
    const f = new FrameDict();
    Object.assign(f.dict, item);
    return f.intern(stacks);
  }
  throw new SnapshotError(`a 'frames' list holds ${describeValue(item)}, expected frame dicts`, offset);
}
