import {
  NO_STACK,
  STACK_HASH_SEED,
  StackTable,
  stackHashFinish,
  stackHashStep,
} from '../model/stack-table.js';
import { Field, fieldOf, type TraceColumns } from '../model/trace-columns.js';
import { StackRef } from '../values/stack-ref.js';
import { decodeUtf8 } from './byte-strings.js';
import { u32 } from './bytes.js';
import { EntryBatches } from './entry-batches.js';
import { EntryShape, memoOpLength } from './entry-shape.js';
import { NOT_FRAMES, stackOfFrameRefs } from './frame-refs.js';
import { decodeLong } from './ints.js';
import { Memo } from './memo.js';
import { Op } from './opcodes.js';
import { ENTRY_IN_MEMO } from './special-values.js';

/** What the fast path needs from the VM. */
export interface FastHost {
  readonly buf: Uint8Array;
  readonly memo: Memo;
  readonly stack: unknown[];
  readonly marks: number[];
  readonly stacks: StackTable;
  readonly trace: TraceColumns;
  readonly base: number;
  memoPutValue(index: number, value: unknown): void;
  stackRef(id: number): StackRef;
  setEntryField(row: number, key: string, value: unknown, pos: number): void;
}

/**
 * The key cache's largest and first sizes: it grows as memo indices need it, as a 64K-slot cache
 * allocated per decode cost more than decoding a small file's entries.
 */
const CACHE_SIZE = 1 << 16;
const FIRST_CACHE_SIZE = 1 << 10;
const UNRESOLVED = -3;
const MAX_PAIRS = 64;
const MAX_MEMO_OP = 5;

/**
 * Reads the body of a trace entry dict (`MARK key value ... SETITEMS`) without the VM's value
 * stack, for the opcode shapes PyTorch writes: string keys by memo or inline, int/str/bool/None
 * values, and `frames` lists of frame dicts seen before. Pairs are held back until SETITEMS; at
 * the first opcode it does not handle it pushes what it read onto the VM stack exactly as the VM
 * would have, and returns, so the VM goes on from there with identical state.
 *
 * A direct-mapped cache (memo index → key field) and an interned table of tracebacks as memo
 * index sequences keep the per-entry work on typed arrays instead of chasing memo objects.
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
  /** Tracebacks as sequences of memo indices → stack ids (see stackOfRun). */
  private memoStacks = new StackTable();
  private resolved = new Int32Array(0);
  private keyMemo = new Int32Array(FIRST_CACHE_SIZE).fill(-1);
  private keyText: string[] = new Array(FIRST_CACHE_SIZE);
  private keyField = new Uint8Array(FIRST_CACHE_SIZE);

  /** Entries of the file's usual shape, read without resolving their keys (see EntryShape). */
  readonly shape: EntryShape;
  /** Whole runs of entries of that shape, read by the WebAssembly scanner where it runs. */
  readonly runs: EntryBatches;

  constructor(
    private readonly host: FastHost,
    entryScan: boolean,
  ) {
    this.shape = new EntryShape(this);
    this.runs = new EntryBatches(host, this.shape, entryScan);
  }

  // What EntryShape needs of the host, passed through.
  get buf(): Uint8Array {
    return this.host.buf;
  }
  get memo(): Memo {
    return this.host.memo;
  }
  get trace(): TraceColumns {
    return this.host.trace;
  }

  /**
   * `p` points just past EMPTY_DICT; the OpenEntry for `row` is already on the VM stack. The
   * common shapes (cached memo keys, small ints, 6-7 byte LONG1 addresses and times) are decoded
   * inline; everything else goes through readKey/readValue.
   */
  read(row: number, p: number, limit: number): number {
    const h = this.host;
    const buf = h.buf;
    // FRAME opcodes can sit anywhere; outside of a key or value they change nothing.
    if (buf[p] === Op.FRAME) return p;
    p = this.memoCode(p, Memo.ENTRY_CODE);
    if (buf[p] !== Op.MARK) return p;
    // The MARK is pushed on the VM's mark stack only if we bail (see bail): a completed entry
    // would pop it straight away.
    p++;
    const { numbers, isNumber } = this;
    let n = 0;
    while (p < limit && n < MAX_PAIRS) {
      let op = buf[p]!;
      if (op === Op.FRAME) {
        p += 9;
        continue;
      }
      if (op === Op.SETITEMS) {
        this.n = n;
        return this.commit(row, p);
      }
      this.n = n;
      const q = this.readKey(p, limit);
      if (q < 0) return this.bail(p, false);
      if (buf[q] === Op.FRAME) return this.bail(q, true);
      op = buf[q]!;
      let r = -1;
      if (op === Op.BININT1) {
        numbers[n] = buf[q + 1]!;
        r = q + 2;
      } else if (op === Op.BININT) {
        numbers[n] = buf[q + 1]! | (buf[q + 2]! << 8) | (buf[q + 3]! << 16) | (buf[q + 4]! << 24);
        r = q + 5;
      } else if (op === Op.LONG1 && buf[q + 1]! <= 7) {
        r = this.smallLong(buf, q);
        numbers[n] = this.longValue;
      }
      if (r >= 0 && !combinesAt(buf, r)) isNumber[n] = 1;
      else if (r >= 0 || (r = this.sharedString(buf, q)) < 0) {
        if ((r = this.readValue(q, limit)) < 0) return this.bail(q, true);
      }
      n++;
      p = r;
    }
    this.n = n;
    return this.bail(p, false);
  }

  private longValue = 0;

  /** A value that is a memo reference to a string (actions, '' metadata): the commonest non-int. */
  private sharedString(buf: Uint8Array, q: number): number {
    const op = buf[q];
    if (op !== Op.BINGET && op !== Op.LONG_BINGET) return -1;
    const next = q + (op === Op.BINGET ? 2 : 5);
    const v = this.host.memo.get(op === Op.BINGET ? buf[q + 1]! : u32(buf, q + 1));
    if (typeof v !== 'string' || combinesAt(buf, next)) return -1;
    this.objects[this.n] = v;
    this.isNumber[this.n] = 0;
    return next;
  }

  /** LONG1 of up to 7 bytes whose value is exact in a double (else -1 with nothing read). */
  private smallLong(buf: Uint8Array, q: number): number {
    const len = buf[q + 1]!;
    const v = len === 0 ? 0 : decodeLong(buf, q + 2, len, 0);
    if (typeof v !== 'number') return -1;
    this.longValue = v;
    return q + 2 + len;
  }

  private commit(row: number, p: number): number {
    const h = this.host;
    const trace = h.trace;
    for (let i = 0; i < this.n; i++) {
      const field = this.fields[i]!;
      if (this.isNumber[i]) {
        const v = this.numbers[i]!;
        if (field === Field.addr) trace.addr[row] = v;
        else if (field === Field.size) trace.size[row] = v;
        else if (field === Field.time_us) trace.timeUs[row] = v;
        else trace.setNumber(row, field, this.keys[i]!, v);
      } else if (field === Field.frames && this.objects[i] instanceof StackRef) {
        trace.stack[row] = (this.objects[i] as StackRef).id;
      } else if (field === Field.frames || field === Field.other) {
        h.setEntryField(row, this.keys[i]!, this.objects[i], p);
      } else {
        trace.setField(row, field, this.keys[i]!, this.objects[i]);
      }
    }
    return p + 1;
  }

  /** Leaves the VM exactly where opcode-by-opcode decoding would be at `p`. */
  private bail(p: number, pendingKey: boolean): number {
    const stack = this.host.stack;
    this.host.marks.push(stack.length);
    for (let i = 0; i < this.n; i++) {
      stack.push(this.keys[i], this.isNumber[i] === 1 ? this.numbers[i] : this.objects[i]);
    }
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
    if (at.end + MAX_MEMO_OP >= limit || combinesAt(buf, at.end + memoOpLength(buf, at.end))) return -1;
    const key = decodeUtf8(buf, at.start, at.end - at.start);
    this.keys[this.n] = key;
    this.fields[this.n] = fieldOf(key);
    return this.memoCode(at.end, this.host.memo.stringCode(key));
  }

  private memoKey(index: number, next: number): number {
    if (index >= this.keyMemo.length && this.keyMemo.length < CACHE_SIZE) this.growKeyCache(index);
    const slot = index & (this.keyMemo.length - 1);
    if (this.keyMemo[slot] !== index) {
      const key = this.host.memo.get(index);
      if (typeof key !== 'string') return -1;
      this.keyMemo[slot] = index;
      this.keyText[slot] = key;
      this.keyField[slot] = fieldOf(key);
    }
    this.keys[this.n] = this.keyText[slot]!;
    this.fields[this.n] = this.keyField[slot]!;
    return next;
  }

  /** Room for memo index `index` (up to CACHE_SIZE); what the cache held is simply read again. */
  private growKeyCache(index: number): void {
    let size = this.keyMemo.length;
    while (size <= index && size < CACHE_SIZE) size *= 2;
    this.keyMemo = new Int32Array(size).fill(-1);
    this.keyText = new Array(size);
    this.keyField = new Uint8Array(size);
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
        if (at.end + MAX_MEMO_OP >= limit || combinesAt(buf, at.end + memoOpLength(buf, at.end))) return -1;
        const v = decodeUtf8(buf, at.start, at.end - at.start);
        this.objects[i] = v;
        this.isNumber[i] = 0;
        return this.memoCode(at.end, this.host.memo.stringCode(v));
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
    if (combinesAt(this.host.buf, next)) return -1;
    this.numbers[this.n] = v;
    this.isNumber[this.n] = 1;
    return next;
  }

  private object(v: unknown, next: number): number {
    if (combinesAt(this.host.buf, next)) return -1;
    this.objects[this.n] = v;
    this.isNumber[this.n] = 0;
    return next;
  }

  /** Strings and shared tracebacks; unusual references go the VM's way, with its errors. */
  private memoValue(index: number, next: number): number {
    const v = this.host.memo.get(index);
    if (v === undefined || v === ENTRY_IN_MEMO) return -1;
    if (typeof v === 'object' && v !== null && !(v instanceof StackRef)) return -1;
    return this.object(v, next);
  }

  /**
   * `EMPTY_LIST [memo] (MARK (BINGET frame)+ APPENDS)* | (BINGET frame APPEND)`: a traceback
   * whose frame dicts were all seen before. Anything else returns -1 with nothing consumed.
   */
  private readFrames(p: number, limit: number): number {
    const q = this.traceback(p, limit);
    if (q < 0) return -1;
    const id = this.tracebackId;
    this.memoCode(p + 1, Memo.stackCode(id));
    this.objects[this.n] = this.host.stackRef(id);
    this.isNumber[this.n] = 0;
    return q;
  }

  /** Stack id of the traceback last read by `traceback`. */
  tracebackId = NO_STACK;

  /** readFrames without its side effects: sets `tracebackId`, returns the position after the list. */
  traceback(p: number, limit: number): number {
    const buf = this.host.buf;
    const listMemo = p + 1;
    let q = listMemo + memoOpLength(buf, listMemo);
    this.runCount = 0;
    this.runHash = STACK_HASH_SEED;
    for (;;) {
      const op = buf[q];
      if (op === Op.MARK) {
        const r = this.frameRun(q + 1, limit);
        if (r < 0 || buf[r] !== Op.APPENDS) return -1;
        q = r + 1;
      } else if (op === Op.BINGET || op === Op.LONG_BINGET) {
        const r = this.frameRun(q, q + (op === Op.BINGET ? 2 : 5));
        if (r < 0 || buf[r] !== Op.APPEND) return -1;
        q = r + 1;
      } else if (op === Op.SETITEMS || op === Op.SHORT_BINUNICODE || op === Op.BINUNICODE) {
        break; // the list is complete: the entry goes on with SETITEMS or its next key
      } else {
        return -1;
      }
      if (q >= limit) return -1;
    }
    const id = this.stackOfRun();
    if (id === NOT_FRAMES) return -1;
    this.tracebackId = id;
    return q;
  }

  private runCount = 0;
  private runHash = 0;

  /**
   * The innermost loop of the decoder: a run of BINGET/LONG_BINGET (frame dicts, we hope),
   * collected as raw memo indices. Frames are resolved once per distinct sequence of indices,
   * not once per entry (see stackOfRun). Returns the position after the run, or -1 at `limit`.
   */
  private frameRun(q: number, limit: number): number {
    const buf = this.host.buf;
    let ids = this.ids;
    let count = this.runCount;
    let hash = this.runHash;
    for (;;) {
      const op = buf[q];
      if (op === Op.LONG_BINGET) {
        if (count === ids.length) ids = this.growIds();
        const index = buf[q + 1]! | (buf[q + 2]! << 8) | (buf[q + 3]! << 16) | (buf[q + 4]! << 24);
        ids[count++] = index;
        hash = stackHashStep(hash, index);
        q += 5;
      } else if (op === Op.BINGET) {
        if (count === ids.length) ids = this.growIds();
        ids[count++] = buf[q + 1]!;
        hash = stackHashStep(hash, buf[q + 1]!);
        q += 2;
      } else if (op === Op.FRAME) {
        q += 9;
      } else {
        break;
      }
      if (q >= limit) {
        if (q > limit) return -1;
        break;
      }
    }
    this.runCount = count;
    this.runHash = hash;
    return q;
  }

  /**
   * The stack id for the memo indices collected by frameRun. A given traceback is written with
   * the same memo indices every time, so the index sequence is interned like a stack and mapped
   * to the real stack once.
   */
  private stackOfRun(): number {
    const n = this.runCount;
    const key = this.memoStacks.internStack(this.ids, n, stackHashFinish(this.runHash, n));
    if (key === NO_STACK) return NO_STACK;
    if (key < this.resolved.length && this.resolved[key] !== UNRESOLVED) return this.resolved[key]!;
    return this.resolve(key, stackOfFrameRefs(this.host.memo, this.host.stacks, this.ids, n));
  }

  private resolve(key: number, id: number): number {
    if (key >= this.resolved.length) {
      const grown = new Int32Array(Math.max(1024, key * 2)).fill(UNRESOLVED);
      grown.set(this.resolved);
      this.resolved = grown;
    }
    this.resolved[key] = id;
    return id;
  }

  private growIds(): Int32Array {
    const grown = new Int32Array(this.ids.length * 2);
    grown.set(this.ids);
    this.ids = grown;
    return grown;
  }

  /** Applies MEMOIZE / BINPUT / LONG_BINPUT at `p` (if any) with a memo code; returns the next position. */
  memoCode(p: number, code: number): number {
    const buf = this.host.buf;
    const op = buf[p];
    if (op === Op.MEMOIZE) this.putCode(this.host.memo.size, code);
    else if (op === Op.BINPUT) this.putCode(buf[p + 1]!, code);
    else if (op === Op.LONG_BINPUT) this.putCode(u32(buf, p + 1), code);
    return p + memoOpLength(buf, p);
  }

  private putCode(index: number, code: number): void {
    if (this.host.memo.putCode(index, code)) this.invalidate(index);
  }

  /** The memo slot `index` was overwritten: forget what the caches remember of it. */
  invalidate(index: number): void {
    this.keyMemo[index & (this.keyMemo.length - 1)] = -1;
    this.shape.forget();
    this.runs.forget();
    // Index sequences may now mean other frames: start over (PyTorch never overwrites the memo).
    this.memoStacks = new StackTable();
    this.resolved = new Int32Array(0);
  }
}

/** Opcodes that would combine the value just read with earlier ones (tuples, calls, ...). */
const COMBINERS = new Uint8Array(256);
for (const op of [
  Op.TUPLE1,
  Op.TUPLE2,
  Op.TUPLE3,
  Op.STACK_GLOBAL,
  Op.REDUCE,
  Op.BUILD,
  Op.NEWOBJ,
  Op.NEWOBJ_EX,
  Op.APPEND,
  Op.SETITEM,
  Op.POP,
  Op.DUP,
  Op.BINPERSID,
  Op.READONLY_BUFFER,
]) {
  COMBINERS[op] = 1;
}

/** Whether the opcode after `p`, looking past a FRAME, would combine what was just read. */
function combinesAt(buf: Uint8Array, p: number): boolean {
  return COMBINERS[buf[buf[p] === Op.FRAME ? p + 9 : p]!] === 1;
}

const span = { start: 0, end: 0 };

/** Payload bounds of the SHORT_BINUNICODE / BINUNICODE string at p. */
function stringAt(buf: Uint8Array, p: number): { start: number; end: number } {
  const short = buf[p] === Op.SHORT_BINUNICODE;
  span.start = p + (short ? 2 : 5);
  span.end = span.start + (short ? buf[p + 1]! : u32(buf, p + 1));
  return span;
}
