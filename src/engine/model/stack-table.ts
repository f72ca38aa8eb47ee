import { jsonText, type PyDict } from '../values/py-values.js';

/** Stack id for "no frames recorded" (absent or empty `frames`). */
export const NO_STACK = -1;

export interface Frame {
  filename: string;
  line: number;
  name: string;
  /** Keys beyond filename/line/name, e.g. fx_node_* from augment_with_fx_traces. */
  extra: PyDict | undefined;
}

/**
 * Every distinct frame and every distinct stack, stored once. PyTorch shares frame dicts and whole
 * tracebacks inside the pickle; a 10M-event trace has only thousands of distinct stacks, so events
 * carry a stack id and analyses aggregate by id instead of comparing frame lists.
 * Stacks are innermost-first, as in the snapshot.
 */
export class StackTable {
  private readonly frames_: Frame[] = [];
  private readonly frameIndex = new Map<string, number>();
  private pool = new Int32Array(1 << 16);
  private poolUsed = 0;
  private starts = new Uint32Array(1 << 12);
  private lengths = new Uint32Array(1 << 12);
  private count = 0;
  private slots = new Int32Array(1 << 12); // open addressing: stack id + 1, 0 = empty
  private hashes = new Uint32Array(1 << 12);

  get frameCount(): number {
    return this.frames_.length;
  }

  get stackCount(): number {
    return this.count;
  }

  frame(id: number): Frame {
    return this.frames_[id]!;
  }

  internFrame(filename: string, line: number, name: string, extra?: PyDict): number {
    const extraKey = extra === undefined ? '' : `\u0000${jsonText(extra)}`;
    const key = `${filename}\u0000${line}\u0000${name}${extraKey}`;
    let id = this.frameIndex.get(key);
    if (id === undefined) {
      id = this.frames_.length;
      this.frames_.push({ filename, line, name, extra });
      this.frameIndex.set(key, id);
    }
    return id;
  }

  /** The frames of a stack, innermost first. */
  frames(id: number): Frame[] {
    return Array.from(this.stack(id), (f) => this.frames_[f]!);
  }

  /** Frame ids of a stack, innermost first. The view aliases internal storage: do not modify. */
  stack(id: number): Int32Array {
    if (id < 0) return EMPTY;
    const start = this.starts[id]!;
    return this.pool.subarray(start, start + this.lengths[id]!);
  }

  /** `hash` may be passed when the caller computed it with stackHashStep while collecting ids. */
  internStack(ids: ArrayLike<number>, length: number, hash = hashIds(ids, length)): number {
    if (length === 0) return NO_STACK;
    const mask = this.slots.length - 1;
    for (let slot = hash & mask; ; slot = (slot + 1) & mask) {
      const entry = this.slots[slot]!;
      if (entry === 0) return this.addStack(ids, length, hash, slot);
      if (this.hashes[slot] === hash && this.sameStack(entry - 1, ids, length)) return entry - 1;
    }
  }

  private sameStack(id: number, ids: ArrayLike<number>, length: number): boolean {
    if (this.lengths[id] !== length) return false;
    const start = this.starts[id]!;
    for (let i = 0; i < length; i++) if (this.pool[start + i] !== ids[i]) return false;
    return true;
  }

  private addStack(ids: ArrayLike<number>, length: number, hash: number, slot: number): number {
    const id = this.count++;
    if (this.poolUsed + length > this.pool.length) this.pool = grow(this.pool, this.poolUsed + length);
    if (id >= this.starts.length) {
      this.starts = grow(this.starts, id + 1);
      this.lengths = grow(this.lengths, id + 1);
    }
    for (let i = 0; i < length; i++) this.pool[this.poolUsed + i] = ids[i]!;
    this.starts[id] = this.poolUsed;
    this.lengths[id] = length;
    this.poolUsed += length;
    this.slots[slot] = id + 1;
    this.hashes[slot] = hash;
    if (this.count * 2 > this.slots.length) this.rehash();
    return id;
  }

  private rehash(): void {
    const size = this.slots.length * 2;
    const slots = new Int32Array(size);
    const hashes = new Uint32Array(size);
    for (let s = 0; s < this.slots.length; s++) {
      const entry = this.slots[s]!;
      if (entry === 0) continue;
      let slot = this.hashes[s]! & (size - 1);
      while (slots[slot] !== 0) slot = (slot + 1) & (size - 1);
      slots[slot] = entry;
      hashes[slot] = this.hashes[s]!;
    }
    this.slots = slots;
    this.hashes = hashes;
  }
}

const EMPTY = new Int32Array(0);

export const STACK_HASH_SEED = 0x811c9dc5;

export function stackHashStep(h: number, frameId: number): number {
  return Math.imul(h ^ frameId, 0x01000193);
}

export function stackHashFinish(h: number, length: number): number {
  const m = Math.imul(h ^ length, 0x01000193);
  return (m ^ (m >>> 15)) >>> 0;
}

function hashIds(ids: ArrayLike<number>, length: number): number {
  let h = STACK_HASH_SEED;
  for (let i = 0; i < length; i++) h = stackHashStep(h, ids[i]!);
  return stackHashFinish(h, length);
}

function grow<T extends Int32Array | Uint32Array>(a: T, need: number): T {
  let size = a.length * 2;
  while (size < need) size *= 2;
  const b = new (a.constructor as new (n: number) => T)(size);
  b.set(a);
  return b;
}
