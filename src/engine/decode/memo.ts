import { SnapshotError } from '../base/errors.js';
import { NO_STACK } from '../model/stack-table.js';
import { StackRef } from '../values/stack-ref.js';
import { ENTRY_IN_MEMO } from './special-values.js';
import { valueList } from './value-list.js';

const EMPTY = 0;
const ENTRY = -1;
/** Stop deduplicating strings past this many (a JS Map holds at most 2^24 entries). */
const MAX_DEDUP_STRINGS = 1 << 20;
const MAX_SPARSE = 1 << 20;

/**
 * The pickle memo as 4-byte slots. PyTorch memoizes every dict, list and str it writes (tens of
 * millions in a big trace) yet refers back to few distinct values. A JS array would cost 8 bytes
 * a slot and be rescanned by every major GC; here a slot holds a code: empty, a trace entry, a
 * traceback (stack id), or an index into a table of distinct values (strings are deduplicated).
 */
export class Memo {
  /** Number of filled slots: Python's len(memo), the index MEMOIZE writes next. */
  size = 0;
  private slots: Int32Array;
  private readonly values: unknown[] = valueList();
  private readonly stringCodes = new Map<string, number>();
  private sparse: Map<number, number> | undefined;
  /**
   * The string last coded, while its code is > 0. Always a string: a field that is undefined in
   * each new Memo deoptimized, in every decode after the first, the code optimized for strings.
   */
  private lastString = '';
  private lastStringCode = 0;
  /** The highest index written so far. */
  private top = -1;

  /**
   * @param refs gives a stack id its one StackRef. An object, not a closure: a new closure per
   *   decode was a new call target, which deoptimized `get` in each decode after the first.
   * @param expectedSlots sizes the slots up front (a big file memoizes a few slots per entry)
   */
  constructor(
    private readonly refs: { stackRef(id: number): StackRef },
    expectedSlots = 0,
  ) {
    this.slots = new Int32Array(Math.max(1 << 16, expectedSlots));
  }

  /** The value in slot `index`, or undefined if it was never written. */
  get(index: number): unknown {
    const code = index < this.slots.length ? this.slots[index]! : (this.sparse?.get(index) ?? EMPTY);
    if (code > 0) return this.values[code - 1];
    if (code === EMPTY) return undefined;
    if (code === ENTRY) return ENTRY_IN_MEMO;
    return this.refs.stackRef(-code - 3);
  }

  /** Returns true when the slot held a value before (an overwrite, which PyTorch never does). */
  put(index: number, value: unknown): boolean {
    if (index > this.top) this.top = index;
    if (index >= this.slots.length && !this.grow(index)) return this.putSparse(index, value);
    const old = this.slots[index]!;
    if (old === EMPTY) this.size++;
    else this.release(old);
    this.slots[index] = this.codeOf(value);
    return old !== EMPTY;
  }

  /** put() for a code already known: the decoder's fast path (entries, tracebacks, strings). */
  putCode(index: number, code: number): boolean {
    if (index > this.top) this.top = index;
    if (index >= this.slots.length && !this.grow(index)) return this.putSparseCode(index, code);
    const old = this.slots[index]!;
    if (old === EMPTY) this.size++;
    else this.release(old);
    this.slots[index] = code;
    return old !== EMPTY;
  }

  static readonly ENTRY_CODE = ENTRY;

  /** The raw code in slot `index` (0: empty, -1: a trace entry, <= -2: a stack, > 0: a value). */
  codeAt(index: number): number {
    return index < this.slots.length ? this.slots[index]! : (this.sparse?.get(index) ?? EMPTY);
  }

  /** The value of a code > 0. */
  valueOf(code: number): unknown {
    return this.values[code - 1];
  }

  /** The stack id of a code <= -2 (see stackCode). */
  static stackOfCode(code: number): number {
    return -code - 3;
  }

  /** MEMOIZE `count` times with these codes; only while appendOnly(). */
  appendCodes(codes: Int32Array, count: number): void {
    const index = this.size;
    if (index + count > this.slots.length) this.grow(index + count);
    this.slots.set(codes.subarray(0, count), index);
    this.size += count;
    this.top = index + count - 1;
  }

  /** True while no slot at or past `size` is filled, so MEMOIZE can never overwrite. */
  appendOnly(): boolean {
    return this.top < this.size;
  }

  static stackCode(id: number): number {
    return -(id === NO_STACK ? -1 : id) - 3;
  }

  /** An object's table entry has one slot; strings are shared between slots and stay. */
  private release(code: number): void {
    if (code > 0 && typeof this.values[code - 1] !== 'string') this.values[code - 1] = undefined;
  }

  /** Far-away explicit indices (BINPUT 2^30) go to a map instead of a giant array. */
  private putSparse(index: number, value: unknown): boolean {
    return this.putSparseCode(index, this.codeOf(value));
  }

  private putSparseCode(index: number, code: number): boolean {
    this.sparse ??= new Map();
    const old = this.sparse.get(index);
    if (old === undefined) {
      if (this.sparse.size >= MAX_SPARSE) throw new SnapshotError('too many scattered memo indices');
      this.size++;
    } else this.release(old);
    this.sparse.set(index, code);
    return old !== undefined;
  }

  private codeOf(value: unknown): number {
    if (value === ENTRY_IN_MEMO) return ENTRY;
    if (value instanceof StackRef) return Memo.stackCode(value.id);
    if (typeof value === 'string') return this.stringCode(value);
    this.values.push(value);
    return this.values.length;
  }

  /** Code of a string value; equal strings share one table entry. */
  stringCode(s: string): number {
    if (s === this.lastString && this.lastStringCode > 0) return this.lastStringCode;
    const known = this.stringCodes.get(s);
    if (known !== undefined) return known;
    this.values.push(s);
    const code = this.values.length;
    if (this.stringCodes.size < MAX_DEDUP_STRINGS) this.stringCodes.set(s, code);
    this.lastString = s;
    this.lastStringCode = code;
    return code;
  }

  /** Grows the slot array to cover `index` unless it is far beyond what is filled. */
  private grow(index: number): boolean {
    if (index > this.size * 2 + (1 << 20)) return false;
    let size = this.slots.length * 2;
    while (size <= index) size *= 2;
    const slots = new Int32Array(size);
    slots.set(this.slots);
    this.slots = slots;
    return true;
  }
}
