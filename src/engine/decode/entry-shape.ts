import { NO_STACK } from '../model/stack-table.js';
import { Field, fieldOf, type TraceColumns } from '../model/trace-columns.js';
import { StackRef } from '../values/stack-ref.js';
import { decodeUtf8 } from './byte-strings.js';
import { u32 } from './bytes.js';
import { Memo } from './memo.js';
import { Op } from './opcodes.js';
import { TextCodes } from './text-codes.js';

/** What the shape reader needs from the fast path (FastEntryReader). */
export interface ShapeHost {
  readonly buf: Uint8Array;
  readonly memo: Memo;
  readonly trace: TraceColumns;
  /** Scans a traceback at p (EMPTY_LIST ...) with no side effects; its stack id is in `tracebackId`. */
  traceback(p: number, limit: number): number;
  readonly tracebackId: number;
  /** Applies the memo opcode at p (if any) with a code; returns the position after it. */
  memoCode(p: number, code: number): number;
}

const MAX_PAIRS = 16;
const FAIL = -1;
/** Kinds of value a learned pair holds, by its key's field. */
export const NUM = 0;
export const STR = 1;
export const FRAMES = 2;

/**
 * PyTorch writes every trace entry of a file with the same keys, by the same memo references, in
 * the same order: `EMPTY_DICT memo MARK (key value)* SETITEMS`. The first entry read by the fast
 * path teaches the key bytes; each later entry is checked against them byte by byte and its values
 * decoded by their field's known kind, straight into the columns, instead of resolving each key.
 *
 * An entry is read in two phases: a scan that only reads (any surprise returns -1 with nothing
 * changed, and the VM goes its usual way), then the memo writes and column writes in file order.
 * Memo slots the entry writes must be empty, so no read in the scan can see a later write.
 */
export class EntryShape {
  /** Learned key opcodes, 2 (BINGET) or 5 (LONG_BINGET) bytes each; empty: learn from the next entry. */
  readonly keyBytes = new Uint8Array(MAX_PAIRS * 5);
  readonly keyEnds = new Int32Array(MAX_PAIRS);
  private readonly keyNames: string[] = new Array(MAX_PAIRS);
  readonly fields = new Uint8Array(MAX_PAIRS);
  readonly kinds = new Uint8Array(MAX_PAIRS);
  /** Pairs of the learned shape; 0 while none is learned. */
  pairs = 0;
  /** Changes whenever the learned shape does. */
  version = 0;
  // Per pair, what the scan found: numbers, strings and where their memo opcodes are.
  private readonly numbers = new Float64Array(MAX_PAIRS);
  private readonly texts: string[] = new Array(MAX_PAIRS).fill('');
  private readonly textMemo = new Int32Array(MAX_PAIRS);
  private readonly memoAt = new Int32Array(MAX_PAIRS);
  private stackId = -1;
  /** Memo slots the entry being scanned writes (the dict, inline strings, the traceback list). */
  private readonly putIndices = new Float64Array(MAX_PAIRS + 1);
  private puts = 0;
  /** The dict being scanned starts with the 'action' key: it is a trace entry. */
  private keyed = false;
  private readonly textCodes: TextCodes;
  /** Position after the SETITEMS of the entry last read. */
  end = 0;

  constructor(private readonly host: ShapeHost) {
    this.textCodes = new TextCodes(host.trace);
  }

  /** Memo slots were overwritten: learned keys and cached codes may mean something else now. */
  forget(): void {
    this.pairs = 0;
    this.version++;
    this.textCodes.forget();
  }

  /**
   * `p` points just past EMPTY_DICT. Returns the trace row the entry was written to (and sets
   * `end`), or -1 with nothing changed if the entry is not of the learned shape.
   */
  read(p: number, limit: number): number {
    const learning = this.pairs === 0;
    this.keyed = false;
    const q = this.scan(p, limit, learning);
    if (q < 0) {
      // An entry of another shape teaches the next one; other dicts (frames, segments) do not.
      if (this.keyed) this.pairs = 0;
      return FAIL;
    }
    return this.commit(p, q);
  }

  private scan(p: number, limit: number, learning: boolean): number {
    const buf = this.host.buf;
    this.puts = 0;
    p = this.freeMemoOp(p);
    if (p < 0) return FAIL;
    if (buf[p] !== Op.MARK) return FAIL;
    p++;
    let i = 0;
    for (; p < limit; i++) {
      if (buf[p] === Op.SETITEMS) break;
      if (i === (learning ? MAX_PAIRS : this.pairs)) return FAIL;
      const v = learning ? this.learnKey(p, i) : this.sameKey(p, i);
      if (v < 0 || v >= limit) return FAIL;
      this.keyed = i === 0 ? this.fields[0] === Field.action : this.keyed;
      const kind = this.kinds[i];
      p = kind === NUM ? this.number(v, i) : kind === STR ? this.text(v, limit, i) : this.frames(v, limit, i);
      if (p < 0) return FAIL;
      // A value that writes the memo must write an empty slot at the index MEMOIZE would use.
      const at = this.memoAt[i]!;
      if (at >= 0 && this.freeMemoOp(at) < 0) return FAIL;
    }
    if (p >= limit || (learning ? i === 0 || this.fields[0] !== Field.action : i !== this.pairs)) return FAIL;
    if (learning) {
      this.pairs = i;
      this.version++;
    }
    return p;
  }

  /**
   * Position after the memo opcode at p (p itself if none), or -1 if it would write a slot that
   * is filled or that this entry writes already. Every write to an empty slot grows the memo by
   * one, so MEMOIZE's index is the memo's size plus the writes before it.
   */
  private freeMemoOp(p: number): number {
    const buf = this.host.buf;
    const op = buf[p];
    const len = memoOpLength(buf, p);
    if (len === 0) return p;
    const memo = this.host.memo;
    const index =
      op === Op.MEMOIZE ? memo.size + this.puts : op === Op.BINPUT ? buf[p + 1]! : u32(buf, p + 1);
    if (memo.get(index) !== undefined) return FAIL;
    for (let k = 0; k < this.puts; k++) if (this.putIndices[k] === index) return FAIL;
    this.putIndices[this.puts++] = index;
    return p + len;
  }

  /** The key at p has the learned bytes of pair i: returns where its value starts. */
  private sameKey(p: number, i: number): number {
    const buf = this.host.buf;
    const keys = this.keyBytes;
    let k = i === 0 ? 0 : this.keyEnds[i - 1]!;
    const end = this.keyEnds[i]!;
    for (; k < end; k++, p++) if (buf[p] !== keys[k]) return FAIL;
    return p;
  }

  /** Learns the key at p as pair i: a memo reference to one of the fields the shape reads. */
  private learnKey(p: number, i: number): number {
    const buf = this.host.buf;
    const op = buf[p];
    const len = op === Op.BINGET ? 2 : op === Op.LONG_BINGET ? 5 : 0;
    if (len === 0) return FAIL;
    const key = this.host.memo.get(op === Op.BINGET ? buf[p + 1]! : u32(buf, p + 1));
    if (typeof key !== 'string') return FAIL;
    const field = fieldOf(key);
    const kind = kindOf(field);
    if (kind < 0) return FAIL;
    const start = i === 0 ? 0 : this.keyEnds[i - 1]!;
    this.keyBytes.set(buf.subarray(p, p + len), start);
    this.keyEnds[i] = start + len;
    this.keyNames[i] = key;
    this.fields[i] = field;
    this.kinds[i] = kind;
    return p + len;
  }

  /** An int small enough to be exact in a double (BININT*, LONG1 of up to 7 bytes). */
  private number(p: number, i: number): number {
    const buf = this.host.buf;
    this.memoAt[i] = -1;
    switch (buf[p]) {
      case Op.BININT1:
        this.numbers[i] = buf[p + 1]!;
        return p + 2;
      case Op.BININT2:
        this.numbers[i] = buf[p + 1]! | (buf[p + 2]! << 8);
        return p + 3;
      case Op.BININT:
        this.numbers[i] = buf[p + 1]! | (buf[p + 2]! << 8) | (buf[p + 3]! << 16) | (buf[p + 4]! << 24);
        return p + 5;
      case Op.LONG1:
        return this.long1(p, i);
      default:
        return FAIL;
    }
  }

  /** Little-endian two's complement: low 4 bytes unsigned plus the signed high part times 2^32. */
  private long1(p: number, i: number): number {
    const buf = this.host.buf;
    const len = buf[p + 1]!;
    if (len > 7) return FAIL;
    const s = p + 2;
    if (len <= 4) {
      let v = 0;
      for (let k = len - 1; k >= 0; k--) v = v * 256 + buf[s + k]!;
      this.numbers[i] = len > 0 && buf[s + len - 1]! >= 0x80 ? v - 2 ** (8 * len) : v;
      return s + len;
    }
    let hi = 0;
    for (let k = len - 1; k >= 4; k--) hi = hi * 256 + buf[s + k]!;
    if (buf[s + len - 1]! >= 0x80) hi -= 2 ** (8 * (len - 4));
    // Beyond 2^53 a double is not exact: leave it to the VM (BigInt).
    if (hi >= 1 << 21 || hi < -(1 << 21)) return FAIL;
    // The low word is summed here, not read with u32: an address's is at or above 2^31 half the
    // time, and u32's optimized code, typed on the small lengths and memo indexes it reads first,
    // was thrown away on the first one (with the decoder's loop it was inlined into).
    let lo = 0;
    for (let k = 3; k >= 0; k--) lo = lo * 256 + buf[s + k]!;
    this.numbers[i] = hi * 4294967296 + lo;
    return s + len;
  }

  /** A str: a memo reference to one, or inline (then usually memoized). */
  private text(p: number, limit: number, i: number): number {
    const buf = this.host.buf;
    const op = buf[p];
    this.memoAt[i] = -1;
    if (op === Op.BINGET || op === Op.LONG_BINGET) {
      const index = op === Op.BINGET ? buf[p + 1]! : u32(buf, p + 1);
      const v = this.host.memo.get(index);
      if (typeof v !== 'string') return FAIL;
      this.texts[i] = v;
      this.textMemo[i] = index;
      return p + (op === Op.BINGET ? 2 : 5);
    }
    if (op !== Op.SHORT_BINUNICODE && op !== Op.BINUNICODE) return FAIL;
    const start = p + (op === Op.SHORT_BINUNICODE ? 2 : 5);
    const end = start + (op === Op.SHORT_BINUNICODE ? buf[p + 1]! : u32(buf, p + 1));
    if (end >= limit) return FAIL;
    this.texts[i] = decodeUtf8(buf, start, end - start);
    this.textMemo[i] = -1;
    this.memoAt[i] = end;
    return end + memoOpLength(buf, end);
  }

  /** A traceback: a new list of known frames, a memo reference to an earlier one, or None. */
  private frames(p: number, limit: number, i: number): number {
    const buf = this.host.buf;
    const op = buf[p];
    this.memoAt[i] = -1;
    if (op === Op.BINGET || op === Op.LONG_BINGET) {
      const v = this.host.memo.get(op === Op.BINGET ? buf[p + 1]! : u32(buf, p + 1));
      if (!(v instanceof StackRef)) return FAIL;
      this.stackId = v.id;
      return p + (op === Op.BINGET ? 2 : 5);
    }
    if (op === Op.NONE) {
      this.stackId = NO_STACK;
      return p + 1;
    }
    if (op !== Op.EMPTY_LIST) return FAIL;
    const q = this.host.traceback(p, limit);
    if (q < 0) return FAIL;
    this.stackId = this.host.tracebackId;
    this.memoAt[i] = p + 1;
    return q;
  }

  /** The second phase: memo writes and columns, in file order. */
  private commit(p: number, setItems: number): number {
    const { memo, trace } = this.host;
    this.host.memoCode(p, Memo.ENTRY_CODE);
    const row = trace.begin();
    for (let i = 0; i < this.pairs; i++) {
      const kind = this.kinds[i];
      if (kind === NUM) {
        this.setNumber(row, i, this.numbers[i]!);
      } else if (kind === STR) {
        const at = this.memoAt[i]!;
        if (at >= 0) this.host.memoCode(at, memo.stringCode(this.texts[i]!));
        this.setText(row, i, this.textMemo[i]!, this.texts[i]!);
      } else {
        const id = this.stackId;
        if (this.memoAt[i]! >= 0) this.host.memoCode(this.memoAt[i]!, Memo.stackCode(id));
        trace.stack[row] = id;
      }
    }
    this.end = setItems + 1;
    return row;
  }

  /** Pair i (a number field) of `row`. */
  setNumber(row: number, i: number, v: number): void {
    const trace = this.host.trace;
    const field = this.fields[i]!;
    if (field === Field.addr) trace.addr[row] = v;
    else if (field === Field.size) trace.size[row] = v;
    else if (field === Field.time_us) trace.timeUs[row] = v;
    else trace.setNumber(row, field, this.keyNames[i]!, v);
  }

  /** The key of pair i, as written. */
  keyName(i: number): string {
    return this.keyNames[i]!;
  }

  /** Text columns by memo index (-1: inline). */
  private setText(row: number, i: number, index: number, text: string): void {
    this.textCodes.set(row, this.fields[i]!, this.keyNames[i]!, index, text);
  }
}

function kindOf(field: Field): number {
  switch (field) {
    case Field.addr:
    case Field.size:
    case Field.stream:
    case Field.time_us:
      return NUM;
    case Field.action:
    case Field.compile_context:
    case Field.user_metadata:
      return STR;
    case Field.frames:
      return FRAMES;
    default:
      return FAIL;
  }
}

export function memoOpLength(buf: Uint8Array, p: number): number {
  const op = buf[p];
  return op === Op.MEMOIZE ? 1 : op === Op.BINPUT ? 2 : op === Op.LONG_BINPUT ? 5 : 0;
}
