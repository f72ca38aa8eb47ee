import type { StackTable } from '../model/stack-table.js';
import { STACK_HASH_SEED, stackHashFinish, stackHashStep } from '../model/stack-table.js';
import { Field, fieldOf, type TraceColumns } from '../model/trace-columns.js';
import { decodeUtf8 } from './byte-strings.js';
import { decodeLong } from './ints.js';
import { Op } from './opcodes.js';
import { ENTRY_IN_MEMO, FrameDict, StackRef } from './special-values.js';

/** What the fast path needs from the VM. */
export interface FastHost {
  readonly buf: Uint8Array;
  readonly memo: unknown[];
  readonly stack: unknown[];
  readonly marks: number[];
  readonly stacks: StackTable;
  readonly trace: TraceColumns;
  readonly base: number;
  memoSize: number;
  memoPutValue(index: number, value: unknown): void;
  stackRef(id: number): StackRef;
  setEntryField(row: number, key: string, value: unknown, pos: number): void;
}

const CACHE_SIZE = 1 << 16;
const MAX_PAIRS = 64;
const MAX_MEMO_OP = 5;

/**
 * Reads the body of a trace entry dict (`MARK key value ... SETITEMS`) without the VM's value
 * stack, for the opcode shapes PyTorch writes: string keys by memo or inline, int/str/bool/None
 * values, and `frames` lists of frame dicts seen before. Pairs are held back until SETITEMS; at
 * the first opcode it does not handle it pushes what it read onto the VM stack exactly as the VM
 * would have, and returns, so the VM goes on from there with identical state.
 *
 * Two small direct-mapped caches keyed by memo index (key string → field, frame dict → frame id)
 * keep the per-entry work on typed arrays instead of chasing memo objects.
 */
export class FastEntryReader {
  private readonly keys: string[] = new Array(MAX_PAIRS);
  private readonly fields = new Uint8Array(MAX_PAIRS);
  private readonly numbers = new Float64Array(MAX_PAIRS);
  private readonly objects: unknown[] = new Array(MAX_PAIRS);
  /** 1: the value is in `numbers`, 0: in `objects`. */
  private readonly isNumber = new Uint8Array(MAX_PAIRS);
  private n = 0;
  private ids: Int32Array = new Int32Array(256);
  private readonly frameMemo = new Int32Array(CACHE_SIZE).fill(-1);
  private readonly frameId = new Int32Array(CACHE_SIZE);
  private readonly keyMemo = new Int32Array(CACHE_SIZE).fill(-1);
  private readonly keyText: string[] = new Array(CACHE_SIZE);
  private readonly keyField = new Uint8Array(CACHE_SIZE);

  constructor(private readonly host: FastHost) {}

  /** `p` points just past EMPTY_DICT; the OpenEntry for `row` is already on the VM stack. */
  read(row: number, p: number, limit: number): number {
    const h = this.host;
    const buf = h.buf;
    p = this.memoOp(p, h.stack[h.stack.length - 1]);
    if (buf[p] !== Op.MARK) return p;
    h.marks.push(h.stack.length);
    p++;
    this.n = 0;
    while (p < limit && this.n < MAX_PAIRS) {
      if (buf[p] === Op.SETITEMS) return this.commit(row, p);
      const afterKey = this.readKey(p, limit);
      if (afterKey < 0) return this.bail(p, false);
      const afterValue = this.readValue(afterKey, limit);
      if (afterValue < 0) return this.bail(afterKey, true);
      this.n++;
      p = afterValue;
    }
    return this.bail(p, false);
  }

  private commit(row: number, p: number): number {
    const h = this.host;
    h.marks.pop();
    const trace = h.trace;
    for (let i = 0; i < this.n; i++) {
      const field = this.fields[i]!;
      if (this.isNumber[i]) trace.setNumber(row, field, this.keys[i]!, this.numbers[i]!);
      else if (field === Field.frames || field === Field.other)
        h.setEntryField(row, this.keys[i]!, this.objects[i], p);
      else trace.setField(row, field, this.keys[i]!, this.objects[i]);
    }
    return p + 1;
  }

  /** Leaves the VM exactly where opcode-by-opcode decoding would be at `p`. */
  private bail(p: number, pendingKey: boolean): number {
    const stack = this.host.stack;
    for (let i = 0; i < this.n; i++)
      stack.push(this.keys[i], this.isNumber[i] ? this.numbers[i] : this.objects[i]);
    if (pendingKey) stack.push(this.keys[this.n]);
    return p;
  }

  private readKey(p: number, limit: number): number {
    const buf = this.host.buf;
    const op = buf[p];
    if (op === Op.BINGET) return this.memoKey(buf[p + 1]!, p + 2);
    if (op === Op.LONG_BINGET) return this.memoKey(u32(buf, p + 1), p + 5);
    if (op !== Op.SHORT_BINUNICODE && op !== Op.BINUNICODE) return -1;
    const at = stringAt(buf, p);
    if (at.end + MAX_MEMO_OP >= limit || isCombiner(buf[at.end + memoOpLength(buf, at.end)]!)) return -1;
    const key = decodeUtf8(buf, at.start, at.end - at.start);
    this.keys[this.n] = key;
    this.fields[this.n] = fieldOf(key);
    return this.memoOp(at.end, key);
  }

  private memoKey(index: number, next: number): number {
    const slot = index & (CACHE_SIZE - 1);
    if (this.keyMemo[slot] !== index) {
      const key = this.host.memo[index];
      if (typeof key !== 'string') return -1;
      this.keyMemo[slot] = index;
      this.keyText[slot] = key;
      this.keyField[slot] = fieldOf(key);
    }
    this.keys[this.n] = this.keyText[slot]!;
    this.fields[this.n] = this.keyField[slot]!;
    return next;
  }

  private readValue(p: number, limit: number): number {
    const buf = this.host.buf;
    const i = this.n;
    switch (buf[p]) {
      case Op.BININT1:
        return this.number(buf[p + 1]!, p + 2);
      case Op.BININT2:
        return this.number(buf[p + 1]! | (buf[p + 2]! << 8), p + 3);
      case Op.BININT:
        return this.number(
          buf[p + 1]! | (buf[p + 2]! << 8) | (buf[p + 3]! << 16) | (buf[p + 4]! << 24),
          p + 5,
        );
      case Op.LONG1: {
        const len = buf[p + 1]!;
        if (len > 8) return -1;
        const v = decodeLong(buf, p + 2, len, this.host.base + p);
        return typeof v === 'number' ? this.number(v, p + 2 + len) : this.object(v, p + 2 + len);
      }
      case Op.SHORT_BINUNICODE:
      case Op.BINUNICODE: {
        // The memo write is the one side effect: do it only once the value is sure to be plain.
        const at = stringAt(buf, p);
        if (at.end + MAX_MEMO_OP >= limit || isCombiner(buf[at.end + memoOpLength(buf, at.end)]!)) return -1;
        const v = decodeUtf8(buf, at.start, at.end - at.start);
        this.objects[i] = v;
        this.isNumber[i] = 0;
        return this.memoOp(at.end, v);
      }
      case Op.BINGET:
        return this.memoValue(buf[p + 1]!, p + 2);
      case Op.LONG_BINGET:
        return this.memoValue(u32(buf, p + 1), p + 5);
      case Op.NEWTRUE:
        return this.object(true, p + 1);
      case Op.NEWFALSE:
        return this.object(false, p + 1);
      case Op.NONE:
        return this.object(null, p + 1);
      case Op.EMPTY_LIST:
        return this.fields[i] === Field.frames ? this.readFrames(p, limit) : -1;
      default:
        return -1;
    }
  }

  private number(v: number, next: number): number {
    if (isCombiner(this.host.buf[next]!)) return -1;
    this.numbers[this.n] = v;
    this.isNumber[this.n] = 1;
    return next;
  }

  private object(v: unknown, next: number): number {
    if (isCombiner(this.host.buf[next]!)) return -1;
    this.objects[this.n] = v;
    this.isNumber[this.n] = 0;
    return next;
  }

  /** Strings and shared tracebacks; unusual references go the VM's way, with its errors. */
  private memoValue(index: number, next: number): number {
    const v = this.host.memo[index];
    if (v === undefined || v === ENTRY_IN_MEMO) return -1;
    if (typeof v === 'object' && v !== null && !(v instanceof StackRef)) return -1;
    return this.object(v, next);
  }

  /**
   * `EMPTY_LIST [memo] (MARK (BINGET frame)+ APPENDS)* | (BINGET frame APPEND)`: a traceback
   * whose frame dicts were all seen before. Anything else returns -1 with nothing consumed.
   */
  private readFrames(p: number, limit: number): number {
    const buf = this.host.buf;
    const listMemo = p + 1;
    let q = listMemo + memoOpLength(buf, listMemo);
    let count = 0;
    let hash = STACK_HASH_SEED;
    for (;;) {
      const op = buf[q];
      if (op === Op.MARK) {
        const r = this.frameRun(q + 1, limit, count, hash);
        if (r < 0 || buf[r] !== Op.APPENDS) return -1;
        count = this.runCount;
        hash = this.runHash;
        q = r + 1;
      } else if (op === Op.BINGET || op === Op.LONG_BINGET) {
        const next = q + (op === Op.BINGET ? 2 : 5);
        const id = buf[next] === Op.APPEND ? this.frameAt(q) : -1;
        if (id < 0) return -1;
        if (count === this.ids.length) this.growIds();
        this.ids[count++] = id;
        hash = stackHashStep(hash, id);
        q = next + 1;
      } else if (op === Op.SETITEMS || op === Op.SHORT_BINUNICODE || op === Op.BINUNICODE) {
        break; // the list is complete: the entry goes on with SETITEMS or its next key
      } else {
        return -1;
      }
      if (q >= limit) return -1;
    }
    const h = this.host;
    const ref = h.stackRef(h.stacks.internStack(this.ids, count, stackHashFinish(hash, count)));
    this.memoOp(listMemo, ref);
    this.objects[this.n] = ref;
    this.isNumber[this.n] = 0;
    return q;
  }

  private runCount = 0;
  private runHash = 0;

  /**
   * The innermost loop of the decoder: a run of BINGET/LONG_BINGET of frame dicts. Everything it
   * touches is a local typed array; a cache miss falls back to the memo once per frame dict.
   * Returns the position after the run (or -1 past `limit`); ids/hash go to runCount/runHash.
   */
  private frameRun(q: number, limit: number, count: number, hash: number): number {
    const buf = this.host.buf;
    const frameMemo = this.frameMemo;
    const frameId = this.frameId;
    let ids = this.ids;
    for (;;) {
      const op = buf[q];
      let index: number;
      let next: number;
      if (op === Op.LONG_BINGET) {
        index = (buf[q + 1]! | (buf[q + 2]! << 8) | (buf[q + 3]! << 16) | (buf[q + 4]! << 24)) >>> 0;
        next = q + 5;
      } else if (op === Op.BINGET) {
        index = buf[q + 1]!;
        next = q + 2;
      } else {
        break;
      }
      const slot = index & (CACHE_SIZE - 1);
      const id = frameMemo[slot] === index ? frameId[slot]! : this.frameAt(q);
      if (id < 0) break;
      if (count === ids.length) ids = this.growIds();
      ids[count++] = id;
      hash = stackHashStep(hash, id);
      q = next;
      if (q >= limit) return -1;
    }
    this.runCount = count;
    this.runHash = hash;
    return q;
  }

  private growIds(): Int32Array {
    const grown = new Int32Array(this.ids.length * 2);
    grown.set(this.ids);
    this.ids = grown;
    return grown;
  }

  /** Frame id of the frame dict referenced by the BINGET/LONG_BINGET at q, or -1. */
  private frameAt(q: number): number {
    const buf = this.host.buf;
    const op = buf[q];
    let index: number;
    if (op === Op.LONG_BINGET) index = u32(buf, q + 1);
    else if (op === Op.BINGET) index = buf[q + 1]!;
    else return -1;
    const slot = index & (CACHE_SIZE - 1);
    if (this.frameMemo[slot] === index) return this.frameId[slot]!;
    const v = this.host.memo[index];
    if (!(v instanceof FrameDict)) return -1;
    const id = v.intern(this.host.stacks);
    this.frameMemo[slot] = index;
    this.frameId[slot] = id;
    return id;
  }

  /** Applies MEMOIZE / BINPUT / LONG_BINPUT at `p` (if any) to `value`; returns the next position. */
  private memoOp(p: number, value: unknown): number {
    const h = this.host;
    const buf = h.buf;
    const op = buf[p];
    if (op === Op.MEMOIZE) h.memoPutValue(h.memoSize, value);
    else if (op === Op.BINPUT) h.memoPutValue(buf[p + 1]!, value);
    else if (op === Op.LONG_BINPUT) h.memoPutValue(u32(buf, p + 1), value);
    return p + memoOpLength(buf, p);
  }

  /** The memo slot `index` was overwritten: forget what the caches remember of it. */
  invalidate(index: number): void {
    const slot = index & (CACHE_SIZE - 1);
    this.frameMemo[slot] = -1;
    this.keyMemo[slot] = -1;
  }
}

/** Opcodes that would combine the value just read with earlier ones (tuples, calls, ...). */
function isCombiner(op: number): boolean {
  return (
    op === Op.TUPLE1 ||
    op === Op.TUPLE2 ||
    op === Op.TUPLE3 ||
    op === Op.STACK_GLOBAL ||
    op === Op.REDUCE ||
    op === Op.BUILD ||
    op === Op.NEWOBJ ||
    op === Op.NEWOBJ_EX ||
    op === Op.APPEND ||
    op === Op.SETITEM ||
    op === Op.POP ||
    op === Op.DUP ||
    op === Op.BINPERSID ||
    op === Op.READONLY_BUFFER
  );
}

function memoOpLength(buf: Uint8Array, p: number): number {
  const op = buf[p];
  return op === Op.MEMOIZE ? 1 : op === Op.BINPUT ? 2 : op === Op.LONG_BINPUT ? 5 : 0;
}

const span = { start: 0, end: 0 };

/** Payload bounds of the SHORT_BINUNICODE / BINUNICODE string at p. */
function stringAt(buf: Uint8Array, p: number): { start: number; end: number } {
  const short = buf[p] === Op.SHORT_BINUNICODE;
  span.start = p + (short ? 2 : 5);
  span.end = span.start + (short ? buf[p + 1]! : u32(buf, p + 1));
  return span;
}

function u32(buf: Uint8Array, p: number): number {
  return (buf[p]! | (buf[p + 1]! << 8) | (buf[p + 2]! << 16) | (buf[p + 3]! << 24)) >>> 0;
}
