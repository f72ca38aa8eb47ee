import { SnapshotError } from '../base/errors.js';
import type { DecodedPickle } from '../model/decoded.js';
import { RowList } from '../model/row-list.js';
import { NO_STACK, StackTable, stackHashFinish } from '../model/stack-table.js';
import { TraceColumns } from '../model/trace-columns.js';
import {
  describeValue,
  type Inert,
  isDict,
  isInert,
  newDict,
  PickledCall,
  PickledExternal,
  PickledGlobal,
  type PyDict,
  shortText,
} from '../values/py-values.js';
import { StackRef } from '../values/stack-ref.js';
import { bytesEqualAscii, decodeLatin1, decodeUtf8 } from './byte-strings.js';
import { join, u32 } from './bytes.js';
import { FastEntryReader, type FastHost } from './fast-entry.js';
import { decodeLong, parseDecimal } from './ints.js';
import { Memo } from './memo.js';
import { HEADER_BYTES, MAX_PROTOCOL, Op, opName } from './opcodes.js';
import { parseFloatText, rawUnicodeEscape, unquote } from './protocol0.js';
import { keyText } from './py-key.js';
import { buildSafe } from './safe-builtins.js';
import {
  ENTRY_IN_MEMO,
  EntryRun,
  FrameDict,
  frameIdOf,
  internFrameList,
  OpenEntry,
  OpenStack,
} from './special-values.js';
import { valueList } from './value-list.js';

/** Bytes that must be buffered before an opcode is decoded, so fixed-size arguments and the
 * dict-kind peek never need their own bounds checks. */
const LOOKAHEAD = 48;
const MAX_TEXT_BYTES = 256 * 1024 * 1024;
/** How much of a new chunk is copied to finish the opcodes that straddle a chunk boundary. */
const BRIDGE_BYTES = 64 * 1024;
const MAX_LINE = 1 << 20;
const KIND_PLAIN = 0;
const KIND_ENTRY = 1;
const KIND_FRAME = 2;

/**
 * A push-fed pickle VM (protocols 0-5). Feed it chunks with `push`, then call `finish`. It keeps
 * no copy of the input beyond one incomplete opcode, so files of any size stream through.
 *
 * It knows one thing about PyTorch snapshots: dicts whose first key is 'action' are trace entries
 * and go to columns; dicts whose first key is 'name'/'filename' are frames; lists under a 'frames'
 * key are tracebacks and become stack ids. Everything else becomes plain JS values.
 */
/** Decodes a whole pickle held in memory into plain JS values (see py-values.ts). */
export function decodePickle(bytes: Uint8Array): { value: unknown; inert: DecodedPickle['inert'] } {
  const vm = new Unpickler(16, false);
  vm.push(bytes);
  const done = vm.finish();
  return { value: done.root, inert: done.inert };
}

export class Unpickler implements FastHost {
  readonly trace: TraceColumns;
  readonly stacks = new StackTable();
  private readonly traceLists = new Map<unknown[], RowList>();
  private readonly fast: FastEntryReader;
  // Shared with the fast path (FastHost); not part of the public API.
  buf: Uint8Array = new Uint8Array(0);
  base = 0;
  readonly stack: unknown[] = valueList();
  readonly marks: number[] = [];
  readonly memo: Memo;
  private view: DataView = new DataView(new ArrayBuffer(0));
  private end = 0;
  private pos = 0;
  private stackRefs = valueList<StackRef>();
  private readonly noStack = new StackRef(NO_STACK);
  private protocol = 0;
  /** STOP was read. Set in the constructor: see there. */
  private done: boolean;
  private root: unknown = undefined;
  private inertCount = 0;
  private readonly inertExamples: Inert[] = [];
  private readonly resolvedGlobals = new Set<Inert>();

  /**
   * @param expectedEntries sizes the trace columns up front
   * @param snapshotShapes false decodes every dict and list as a plain value (generic pickles)
   * @param entryScan false reads every entry in JS (the WebAssembly scanner gives the same result)
   */
  constructor(
    expectedEntries = 1024,
    private readonly snapshotShapes = true,
    entryScan = true,
  ) {
    // Written once more after its definition, so V8 sees a field that changes from the start: a
    // field first changed by STOP threw away the `run` optimized for it being constant, at the end
    // of the first file, and the next file compiled `run` again.
    this.done = false;
    this.trace = new TraceColumns(expectedEntries);
    // Each entry memoizes its dict and usually its traceback list.
    this.memo = new Memo(this, expectedEntries * 2);
    // Generic pickles never read trace entries: no scanner to instantiate for them.
    this.fast = new FastEntryReader(this, entryScan && snapshotShapes);
  }

  push(chunk: Uint8Array): void {
    if (this.done || chunk.length === 0) return;
    const rest = this.end - this.pos;
    const chunkBase = this.base + this.end;
    if (rest === 0) {
      this.setBuffer(chunk, chunkBase);
      this.run(false, Number.POSITIVE_INFINITY);
      return;
    }
    // Copy only the unread tail plus the start of the new chunk, decode across the seam, then
    // go on in the new chunk itself: the input is never copied as a whole.
    const take = Math.min(chunk.length, rest + BRIDGE_BYTES);
    this.setBuffer(
      join(this.buf.subarray(this.pos, this.end), chunk.subarray(0, take)),
      this.base + this.pos,
    );
    this.run(false, rest);
    if (this.done) return;
    if (this.pos >= rest) {
      const at = this.pos - rest;
      this.setBuffer(chunk, chunkBase);
      this.pos = at;
    } else if (take < chunk.length) {
      // One opcode is longer than the seam (a huge string): join it whole.
      const tail = this.buf.subarray(this.pos, this.end);
      this.setBuffer(join(tail, chunk.subarray(take)), this.base + this.pos);
    }
    this.run(false, Number.POSITIVE_INFINITY);
  }

  finish(): DecodedPickle {
    this.runTail();
    if (!this.done) {
      const what = this.end === 0 && this.base === 0 ? 'empty input' : 'truncated pickle: no STOP opcode';
      throw new SnapshotError(what, this.base + this.end);
    }
    this.fast.runs.release();
    return {
      root: this.root,
      protocol: this.protocol,
      trace: this.trace,
      stacks: this.stacks,
      traceLists: this.traceLists,
      scannedEntries: this.fast.runs.scanned,
      inert: { count: this.inertCount, examples: this.inertExamples },
    };
  }

  /**
   * Decodes the input's last bytes (less than LOOKAHEAD, or an opcode that never got its payload)
   * one opcode at a time, each checked first for running past the end. Out of `run`: that check
   * comes only at the end of a file, after `run` is optimized, and threw it away in every file.
   */
  private runTail(): void {
    while (!this.done && this.pos < this.end) {
      const op = this.buf[this.pos]!;
      if (this.pos + HEADER_BYTES[op]! > this.end)
        this.fail(`truncated pickle: ${opName(op)} runs past the end of the input`);
      this.run(true, this.pos + 1);
    }
  }

  private setBuffer(buf: Uint8Array, base: number): void {
    // A caller may hand the same array back refilled: the scanner's copy is stale either way.
    this.fast.runs.inputChanged();
    this.buf = buf;
    this.view = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
    this.end = buf.length;
    this.base = base;
    this.pos = 0;
  }

  private fail(message: string, at = this.pos): never {
    throw new SnapshotError(message, this.base + at);
  }

  /**
   * Decodes opcodes until the buffer runs short (or STOP, or `stopAt`). Hot opcodes are inline.
   * `final`: the input ends here; runTail has checked that the opcode's fixed part is there.
   */
  private run(final: boolean, stopAt: number): void {
    const buf = this.buf;
    const end = this.end;
    const stack = this.stack;
    let pos = this.pos;
    // `stopAt` is checked after each opcode, not before: runTail decodes one opcode a call, and a
    // loop that went round again entered the optimized loop just to leave it (a deopt each time).
    while (pos < end && !this.done) {
      if (end - pos < LOOKAHEAD && !final) break;
      const op = buf[pos]!;
      switch (op) {
        case Op.BINGET:
          stack.push(this.memoGet(buf[pos + 1]!, pos));
          pos += 2;
          break;
        case Op.LONG_BINGET:
          stack.push(this.memoGet(u32(buf, pos + 1), pos));
          pos += 5;
          break;
        case Op.MEMOIZE:
          this.memoPut(this.memo.size, pos);
          pos += 1;
          break;
        case Op.MARK:
          this.marks.push(stack.length);
          pos += 1;
          break;
        case Op.BININT1:
          stack.push(buf[pos + 1]!);
          pos += 2;
          break;
        case Op.BININT2:
          stack.push(buf[pos + 1]! | (buf[pos + 2]! << 8));
          pos += 3;
          break;
        case Op.BININT:
          stack.push(buf[pos + 1]! | (buf[pos + 2]! << 8) | (buf[pos + 3]! << 16) | (buf[pos + 4]! << 24));
          pos += 5;
          break;
        case Op.LONG1: {
          const n = buf[pos + 1]!;
          if (pos + 2 + n > end) {
            this.suspend(pos, final);
            return;
          }
          stack.push(decodeLong(buf, pos + 2, n, this.base + pos));
          pos += 2 + n;
          break;
        }
        case Op.SHORT_BINUNICODE: {
          const n = buf[pos + 1]!;
          if (pos + 2 + n > end) {
            this.suspend(pos, final);
            return;
          }
          stack.push(decodeUtf8(buf, pos + 2, n));
          pos += 2 + n;
          break;
        }
        case Op.EMPTY_DICT:
          pos = this.emptyDict(pos, final ? end : end - LOOKAHEAD);
          break;
        case Op.EMPTY_LIST:
          stack.push(this.isFramesValue() ? new OpenStack() : []);
          pos += 1;
          break;
        case Op.SETITEMS:
          this.pos = pos;
          this.setItems(this.popMark(pos), pos);
          pos += 1;
          break;
        case Op.APPENDS:
          this.pos = pos;
          this.appendItems(this.popMark(pos), pos);
          pos += 1;
          break;
        case Op.NEWFALSE:
          stack.push(false);
          pos += 1;
          break;
        case Op.NEWTRUE:
          stack.push(true);
          pos += 1;
          break;
        case Op.NONE:
          stack.push(null);
          pos += 1;
          break;
        default: {
          this.pos = pos;
          const next = this.rareOp(op, final);
          if (next < 0) return;
          pos = next;
        }
      }
      if (pos >= stopAt) break;
    }
    this.pos = pos;
  }

  /**
   * EMPTY_DICT at `pos`, with what follows it when it starts trace entries; returns the position
   * after what it read. Out of `run`: an entry of an unusual shape takes a path that is rare and
   * may first come after `run` is optimized, which then threw all of `run` away; here it costs
   * this function's recompiling only.
   */
  private emptyDict(pos: number, limit: number): number {
    const fast = this.fast;
    const runs = this.snapshotShapes ? fast.runs.read(pos + 1, limit) : 0;
    if (runs > 0) return this.pushRun(runs);
    const row = this.snapshotShapes ? fast.shape.read(pos + 1, limit) : -1;
    if (row >= 0) {
      this.stack.push(new OpenEntry(row));
      return fast.shape.end;
    }
    const dict = this.newDictFor(pos + 1);
    this.stack.push(dict);
    if (!(dict instanceof OpenEntry)) return pos + 1;
    this.pos = pos + 1;
    return fast.read(dict.row, pos + 1, limit);
  }

  /** Keeps the unread tail for the next chunk, or reports truncation at the end of input. */
  private suspend(pos: number, final: boolean): void {
    this.pos = pos;
    if (final) this.fail(`truncated pickle: ${opName(this.buf[pos]!)} runs past the end of the input`, pos);
  }

  private need(pos: number, n: number, final: boolean): boolean {
    if (pos + n <= this.end) return true;
    this.suspend(pos, final);
    return false;
  }

  private popMark(pos: number): number {
    const m = this.marks.pop();
    if (m === undefined) this.fail(`${opName(this.buf[pos]!)} without a MARK`, pos);
    return m;
  }

  private memoGet(index: number, pos: number): unknown {
    const v = this.memo.get(index);
    if (v === undefined) this.fail(`memo entry ${index} is read before it is written`, pos);
    if (v === ENTRY_IN_MEMO) this.fail(`memo entry ${index} refers back to a trace entry`, pos);
    return v;
  }

  private memoPut(index: number, pos: number): void {
    if (this.stack.length === 0) this.fail('memoize with an empty stack', pos);
    if (index > 0x7fffffff) this.fail(`memo index ${index} too large`, pos);
    this.memoPutValue(index, this.stack[this.stack.length - 1]);
  }

  memoPutValue(index: number, v: unknown): void {
    if (v instanceof OpenStack) v.memoSlot = index;
    if (this.memo.put(index, v instanceof OpenEntry ? ENTRY_IN_MEMO : v)) this.fast.invalidate(index);
  }

  stackRef(id: number): StackRef {
    return id === NO_STACK ? this.noStack : (this.stackRefs[id] ??= new StackRef(id));
  }

  /** Peeks past EMPTY_DICT [memo op] [MARK] at the first key to pick the dict's representation. */
  private newDictFor(p: number): unknown {
    if (!this.snapshotShapes) return newDict();
    const buf = this.buf;
    p = skipFrame(buf, p);
    const memoOp = buf[p];
    if (memoOp === Op.MEMOIZE) p += 1;
    else if (memoOp === Op.BINPUT) p += 2;
    else if (memoOp === Op.LONG_BINPUT) p += 5;
    p = skipFrame(buf, p);
    if (buf[p] === Op.MARK) p = skipFrame(buf, p + 1);
    const kind = this.keyKind(p);
    if (kind === KIND_ENTRY) return new OpenEntry(this.trace.begin());
    if (kind === KIND_FRAME) return new FrameDict();
    return newDict();
  }

  private keyKind(p: number): number {
    const buf = this.buf;
    const op = buf[p];
    let key: unknown;
    if (op === Op.BINGET) key = this.memo.get(buf[p + 1]!);
    else if (op === Op.LONG_BINGET) key = this.memo.get(u32(buf, p + 1));
    else if (op === Op.SHORT_BINUNICODE) return inlineKeyKind(buf, p + 2, buf[p + 1]!);
    else if (op === Op.BINUNICODE) return inlineKeyKind(buf, p + 5, u32(buf, p + 1));
    if (key === 'action') return KIND_ENTRY;
    if (key === 'name' || key === 'filename') return KIND_FRAME;
    return KIND_PLAIN;
  }

  /** True when the list about to be created is the value of a 'frames' key of a dict. */
  private isFramesValue(): boolean {
    if (!this.snapshotShapes) return false;
    const stack = this.stack;
    const n = stack.length;
    if (n < 2 || stack[n - 1] !== 'frames') return false;
    const m = this.marks.length > 0 ? this.marks[this.marks.length - 1]! : -1;
    const owner = m >= 1 && (n - m) % 2 === 1 ? stack[m - 1] : stack[n - 2];
    return owner instanceof OpenEntry || owner instanceof FrameDict || isDict(owner);
  }

  private setItems(m: number, pos: number): void {
    const stack = this.stack;
    if (m === 0) this.fail('SETITEMS with no dict to set into', pos);
    if ((stack.length - m) % 2 !== 0) this.fail('SETITEMS with an odd number of items', pos);
    const target = stack[m - 1];
    for (let i = m; i < stack.length; i += 2) this.setItem(target, stack[i], stack[i + 1], pos);
    stack.length = m;
  }

  setEntryField(row: number, key: string, value: unknown, pos: number): void {
    if (key === 'frames') this.trace.stack[row] = this.stackIdOf(value, pos);
    else this.trace.set(row, key, this.plain(value));
  }

  private setItem(target: unknown, key: unknown, value: unknown, pos: number): void {
    const k = typeof key === 'string' ? key : keyText(key);
    if (target instanceof OpenEntry) {
      this.setEntryField(target.row, k, value, pos);
    } else if (target instanceof FrameDict) {
      target.set(k, this.plain(value));
    } else if (isDict(target)) {
      target[k] = this.plain(value);
    } else if (target instanceof PickledCall) {
      target.state ??= newDict();
      if (isDict(target.state)) target.state[k] = this.plain(value);
    } else {
      this.fail(`${opName(this.buf[pos]!)} into ${describeValue(target)}`, pos);
    }
  }

  /**
   * Pushes the run of `count` entries just read; returns the position after it. One EntryRun
   * stands for them only when APPENDS comes next (the one place that takes runs apart).
   */
  private pushRun(count: number): number {
    const { first, end } = this.fast.runs;
    if (count > 1 && this.buf[skipFrame(this.buf, end)] === Op.APPENDS) {
      this.stack.push(new EntryRun(first, count));
    } else {
      for (let i = 0; i < count; i++) this.stack.push(new OpenEntry(first + i));
    }
    return end;
  }

  private appendItems(m: number, pos: number): void {
    const stack = this.stack;
    if (m === 0) this.fail('APPENDS with no list to append to', pos);
    const target = stack[m - 1];
    const top = stack[stack.length - 1];
    if (top instanceof EntryRun && !Array.isArray(target)) {
      stack.pop();
      for (let i = 0; i < top.count; i++) stack.push(new OpenEntry(top.first + i));
    }
    if (target instanceof OpenStack) this.appendFrames(target, m, pos);
    else if (Array.isArray(target) && (stack[m] instanceof OpenEntry || stack[m] instanceof EntryRun))
      this.appendEntries(target, m, pos);
    else for (let i = m; i < stack.length; i++) this.appendItem(target, stack[i], pos);
    stack.length = m;
  }

  /** A batch of up to 1000 trace entries: one list lookup for the whole batch. */
  private appendEntries(target: unknown[], m: number, pos: number): void {
    const stack = this.stack;
    const rows = this.rowsOf(target, pos);
    for (let i = m; i < stack.length; i++) {
      const item = stack[i];
      if (item instanceof OpenEntry) rows.add(item.row);
      else if (item instanceof EntryRun) rows.addRun(item.first, item.count);
      else rows.add(this.entryFromDict(item, pos));
    }
  }

  /** The hottest append: tracebacks of 20-60 frame dicts, each one interned already. */
  private appendFrames(target: OpenStack, m: number, pos: number): void {
    const stack = this.stack;
    for (let i = m; i < stack.length; i++) {
      const item = stack[i];
      target.add(
        item instanceof FrameDict && item.id >= 0 ? item.id : frameIdOf(item, this.stacks, this.base + pos),
      );
    }
  }

  private appendItem(target: unknown, item: unknown, pos: number): void {
    if (item instanceof EntryRun) {
      for (let i = 0; i < item.count; i++) this.appendItem(target, new OpenEntry(item.first + i), pos);
      return;
    }
    if (target instanceof OpenStack) {
      target.add(frameIdOf(item, this.stacks, this.base + pos));
      return;
    }
    if (!Array.isArray(target) || Object.isFrozen(target)) {
      if (target instanceof PickledCall) {
        this.appendToCall(target, item);
        return;
      }
      this.fail(`${opName(this.buf[pos]!)} to ${describeValue(target)}`, pos);
    }
    const rows = this.traceLists.get(target);
    if (item instanceof OpenEntry) this.rowsOf(target, pos).add(item.row);
    else if (rows !== undefined) rows.add(this.entryFromDict(item, pos));
    else target.push(this.plain(item));
  }

  private appendToCall(target: PickledCall, item: unknown): void {
    if (!Array.isArray(target.state)) target.state = [];
    (target.state as unknown[]).push(this.plain(item));
  }

  private rowsOf(list: unknown[], pos: number): RowList {
    let rows = this.traceLists.get(list);
    if (rows === undefined) {
      // Entries before this one may have come as plain dicts (keys in another order, so not
      // recognised as entries when they were read): they become rows too, in list order.
      if (!list.every((item) => isDict(item) && 'action' in item))
        this.fail('a list mixes trace entries with other values', pos);
      rows = new RowList();
      for (const item of list) rows.add(this.entryFromDict(item, pos));
      list.length = 0;
      this.traceLists.set(list, rows);
    }
    return rows;
  }

  /** A trace entry whose keys came in an unusual order: same columns, slower path. */
  private entryFromDict(item: unknown, pos: number): number {
    if (!isDict(item)) this.fail(`a trace list holds ${describeValue(item)}, expected dicts`, pos);
    const row = this.trace.begin();
    for (const k of Object.keys(item)) {
      if (k === 'frames') this.trace.stack[row] = this.stackIdOf(item[k], pos);
      else this.trace.set(row, k, item[k]);
    }
    return row;
  }

  private stackIdOf(value: unknown, pos: number): number {
    if (value instanceof OpenStack) return this.closeStack(value).id;
    if (value instanceof StackRef) return value.id;
    if (value === null) return NO_STACK;
    if (Array.isArray(value)) return internFrameList(value, this.stacks, this.base + pos);
    return this.fail(`'frames' is ${describeValue(value)}, expected a list of frames`, pos);
  }

  private closeStack(open: OpenStack): StackRef {
    const n = open.ids.length;
    const id = this.stacks.internStack(open.ids, n, stackHashFinish(open.hash, n));
    const ref = this.stackRef(id);
    if (open.memoSlot >= 0 && this.memo.get(open.memoSlot) === open) this.memo.put(open.memoSlot, ref);
    return ref;
  }

  /** Turns the decoder's stand-ins back into plain values when they land in a plain container. */
  private plain(v: unknown): unknown {
    if (typeof v !== 'object' || v === null) return v;
    if (v instanceof OpenStack) return this.closeStack(v);
    if (v instanceof FrameDict) return v.dict;
    if (v instanceof OpenEntry) return this.entryAsDict(v.row);
    return v;
  }

  private entryAsDict(row: number): PyDict {
    const t = this.trace;
    const d = newDict();
    d.action = t.actionName(row);
    if (!Number.isNaN(t.addr[row]!)) d.addr = t.addr[row];
    if (!Number.isNaN(t.size[row]!)) d.size = t.size[row];
    d.stream = t.streams[t.stream[row]!];
    if (!Number.isNaN(t.timeUs[row]!)) d.time_us = t.timeUs[row];
    if (t.stack[row]! >= 0) d.frames = this.stackRefs[t.stack[row]!] ?? new StackRef(t.stack[row]!);
    return Object.assign(d, t.extras.get(row));
  }

  /** A builtin data constructor was applied: its global no longer counts as a request for code. */
  private resolveGlobal(callable: unknown, value: unknown): void {
    const g = callable as Inert;
    if (!this.resolvedGlobals.has(g) && this.resolvedGlobals.size < 1 << 20) {
      this.resolvedGlobals.add(g);
      this.inertCount--;
      const i = this.inertExamples.indexOf(g);
      if (i >= 0) this.inertExamples.splice(i, 1);
    }
    this.stack.push(value);
  }

  private pushInert(v: Inert): void {
    this.inertCount++;
    if (this.inertExamples.length < 8) this.inertExamples.push(v);
    this.stack.push(v);
  }

  /** Everything not on the hot path. Returns the next position, or -1 to wait for more input. */
  private rareOp(op: number, final: boolean): number {
    const pos = this.pos;
    const buf = this.buf;
    const stack = this.stack;
    switch (op) {
      // Every 64 KiB of the stream: too rare for `run`, whose optimized loop the first one met
      // after it was optimized threw away (its `pos += 9` had no type feedback yet).
      case Op.FRAME:
        return pos + 9;
      case Op.PROTO: {
        const v = buf[pos + 1]!;
        if (v > MAX_PROTOCOL)
          this.fail(`pickle protocol ${v} is newer than memlens supports (${MAX_PROTOCOL})`);
        this.protocol = v;
        return pos + 2;
      }
      case Op.STOP:
        if (stack.length !== 1) this.fail(`STOP with ${stack.length} values on the stack, expected 1`);
        this.root = this.plain(stack.pop());
        this.done = true;
        return pos + 1;
      case Op.BINPUT:
        this.memoPut(buf[pos + 1]!, pos);
        return pos + 2;
      case Op.LONG_BINPUT:
        this.memoPut(u32(buf, pos + 1), pos);
        return pos + 5;
      case Op.APPEND:
        this.needStack(2);
        this.appendItem(stack[stack.length - 2], stack.pop(), pos);
        return pos + 1;
      case Op.SETITEM: {
        this.needStack(3);
        const value = stack.pop();
        const key = stack.pop();
        this.setItem(stack[stack.length - 1], key, value, pos);
        return pos + 1;
      }
      case Op.BINFLOAT:
        stack.push(this.view.getFloat64(pos + 1, false));
        return pos + 9;
      case Op.EMPTY_TUPLE:
        stack.push(Object.freeze([]));
        return pos + 1;
      case Op.TUPLE1:
      case Op.TUPLE2:
      case Op.TUPLE3:
        this.tupleOf(op - Op.TUPLE1 + 1);
        return pos + 1;
      case Op.TUPLE:
        this.tupleOf(stack.length - this.popMark(pos));
        return pos + 1;
      case Op.LIST:
      case Op.DICT:
      case Op.FROZENSET:
        this.fromMark(op, this.popMark(pos));
        return pos + 1;
      case Op.EMPTY_SET:
        stack.push(new Set());
        return pos + 1;
      case Op.ADDITEMS: {
        const m = this.popMark(pos);
        const set = stack[m - 1];
        if (!(set instanceof Set)) this.fail(`ADDITEMS to ${describeValue(set)}`);
        for (let i = m; i < stack.length; i++) set.add(this.plain(stack[i]));
        stack.length = m;
        return pos + 1;
      }
      case Op.POP:
        this.needStack(1);
        stack.pop();
        return pos + 1;
      case Op.POP_MARK:
        stack.length = this.popMark(pos);
        return pos + 1;
      case Op.DUP:
        this.needStack(1);
        stack.push(stack[stack.length - 1]);
        return pos + 1;
      case Op.LONG4: {
        const n = u32(buf, pos + 1);
        if (n > 0x7fffffff) this.fail('LONG4 with a negative length');
        if (!this.need(pos, 5 + n, final)) return -1;
        stack.push(decodeLong(buf, pos + 5, n, this.base + pos));
        return pos + 5 + n;
      }
      default:
        return this.rareDataOp(op, final);
    }
  }

  private rareDataOp(op: number, final: boolean): number {
    const pos = this.pos;
    const buf = this.buf;
    switch (op) {
      case Op.BINUNICODE:
        return this.text(pos, 5, u32(buf, pos + 1), final, decodeUtf8);
      case Op.BINUNICODE8:
        return this.text(pos, 9, this.u64(pos + 1), final, decodeUtf8);
      case Op.SHORT_BINSTRING:
        return this.text(pos, 2, buf[pos + 1]!, final, decodeLatin1);
      case Op.BINSTRING:
        return this.text(pos, 5, u32(buf, pos + 1), final, decodeLatin1);
      case Op.SHORT_BINBYTES:
        return this.text(pos, 2, buf[pos + 1]!, final, copyBytes);
      case Op.BINBYTES:
        return this.text(pos, 5, u32(buf, pos + 1), final, copyBytes);
      case Op.BINBYTES8:
      case Op.BYTEARRAY8:
        return this.text(pos, 9, this.u64(pos + 1), final, copyBytes);
      default:
        return this.objectOp(op, final);
    }
  }

  /** Opcodes that would import or call Python code: recorded as inert values, never executed. */
  private objectOp(op: number, final: boolean): number {
    const pos = this.pos;
    const stack = this.stack;
    const at = this.base + pos;
    switch (op) {
      case Op.STACK_GLOBAL: {
        this.needStack(2);
        const name = stack.pop();
        const module = stack.pop();
        this.pushInert(new PickledGlobal(shortText(module), shortText(name), at));
        return pos + 1;
      }
      case Op.REDUCE:
      case Op.NEWOBJ: {
        this.needStack(2);
        const args = this.plain(stack.pop());
        const callable = stack.pop();
        const safe = op === Op.REDUCE ? buildSafe(callable, args) : undefined;
        if (safe) this.resolveGlobal(callable, safe.value);
        else this.pushInert(new PickledCall(callable, args, at));
        return pos + 1;
      }
      case Op.NEWOBJ_EX: {
        this.needStack(3);
        const kwargs = this.plain(stack.pop());
        const args = this.plain(stack.pop());
        this.pushInert(new PickledCall(stack.pop(), [args, kwargs], at));
        return pos + 1;
      }
      case Op.BUILD: {
        this.needStack(2);
        const state = this.plain(stack.pop());
        const target = stack[stack.length - 1];
        if (target instanceof PickledCall) target.state = state;
        else if (!isInert(target)) this.fail(`BUILD on ${describeValue(target)}`);
        return pos + 1;
      }
      case Op.BINPERSID:
        this.needStack(1);
        this.pushInert(new PickledExternal('persistent id', this.plain(this.stack.pop()), at));
        return pos + 1;
      case Op.EXT1:
        this.pushInert(new PickledExternal('extension code', this.buf[pos + 1]!, at));
        return pos + 2;
      case Op.EXT2:
        this.pushInert(
          new PickledExternal('extension code', this.buf[pos + 1]! | (this.buf[pos + 2]! << 8), at),
        );
        return pos + 3;
      case Op.EXT4:
        this.pushInert(new PickledExternal('extension code', u32(this.buf, pos + 1), at));
        return pos + 5;
      case Op.NEXT_BUFFER:
        this.pushInert(new PickledExternal('out-of-band buffer', null, at));
        return pos + 1;
      case Op.READONLY_BUFFER:
        this.needStack(1);
        return pos + 1;
      default:
        return this.textOp(op, final);
    }
  }

  /** Protocol 0/1 opcodes with newline-terminated arguments. */
  private textOp(op: number, final: boolean): number {
    const pos = this.pos;
    const stack = this.stack;
    const line = this.readLine(pos + 1, final);
    if (line === null) return -1;
    const at = this.base + pos;
    let next = pos + 1 + line.length + 1;
    switch (op) {
      case Op.INT:
        if (line === '01' || line === '00') stack.push(line === '01');
        else stack.push(parseDecimal(line, at));
        return next;
      case Op.LONG:
        stack.push(parseDecimal(line, at));
        return next;
      case Op.FLOAT:
        stack.push(parseFloatText(line, at));
        return next;
      case Op.STRING:
        stack.push(unquote(line, at));
        return next;
      case Op.UNICODE:
        stack.push(rawUnicodeEscape(line));
        return next;
      case Op.GET:
        stack.push(this.memoGet(Number(parseDecimal(line, at)), pos));
        return next;
      case Op.PUT:
        this.memoPut(Number(parseDecimal(line, at)), pos);
        return next;
      case Op.PERSID:
        this.pushInert(new PickledExternal('persistent id', line, at));
        return next;
      case Op.GLOBAL:
      case Op.INST: {
        const name = this.readLine(next, final);
        if (name === null) return -1;
        next += name.length + 1;
        const global = new PickledGlobal(line, name, at);
        if (op === Op.GLOBAL) this.pushInert(global);
        else this.pushInert(new PickledCall(global, this.popItems(this.popMark(pos)), at));
        return next;
      }
      case Op.OBJ: {
        const items = this.popItems(this.popMark(pos));
        if (items.length === 0) this.fail('OBJ without a class');
        this.pushInert(new PickledCall(items[0], Object.freeze(items.slice(1)), at));
        return pos + 1;
      }
      default:
        return this.fail(`unknown opcode ${opName(op)}`);
    }
  }

  private readLine(start: number, final: boolean): string | null {
    const buf = this.buf;
    const limit = Math.min(this.end, start + MAX_LINE);
    for (let i = start; i < limit; i++) {
      if (buf[i] === 0x0a) return decodeLatin1(buf, start, i - start);
    }
    if (limit - start >= MAX_LINE) this.fail('text argument longer than 1 MiB');
    if (!final) return null;
    if (this.textOpcodes.has(buf[this.pos]!))
      this.fail(`truncated pickle: ${opName(buf[this.pos]!)} has no end of line`);
    return this.fail(`unknown opcode ${opName(buf[this.pos]!)}`);
  }

  private readonly textOpcodes = new Set<number>([
    Op.INT,
    Op.LONG,
    Op.FLOAT,
    Op.STRING,
    Op.UNICODE,
    Op.GET,
    Op.PUT,
    Op.PERSID,
    Op.GLOBAL,
    Op.INST,
  ]);

  private text(
    pos: number,
    header: number,
    length: number,
    final: boolean,
    decode: (buf: Uint8Array, start: number, length: number) => unknown,
  ): number {
    if (length > MAX_TEXT_BYTES)
      this.fail(`${opName(this.buf[pos]!)} of ${length} bytes is larger than memlens accepts`);
    if (!this.need(pos, header + length, final)) return -1;
    this.stack.push(decode(this.buf, pos + header, length));
    return pos + header + length;
  }

  private u64(p: number): number {
    const hi = u32(this.buf, p + 4);
    return hi === 0 ? u32(this.buf, p) : Number.MAX_SAFE_INTEGER;
  }

  private needStack(n: number): void {
    if (this.stack.length < n) this.fail(`${opName(this.buf[this.pos]!)} needs ${n} values on the stack`);
  }

  private tupleOf(n: number): void {
    this.needStack(n);
    const items = this.popItems(this.stack.length - n);
    this.stack.push(Object.freeze(items));
  }

  private popItems(from: number): unknown[] {
    const items = this.stack.slice(from).map((v) => this.plain(v));
    this.stack.length = from;
    return items;
  }

  private fromMark(op: number, m: number): void {
    const items = this.popItems(m);
    if (op === Op.LIST) this.stack.push(items);
    else if (op === Op.FROZENSET) this.stack.push(new Set(items));
    else {
      if (items.length % 2 !== 0) this.fail('DICT with an odd number of items');
      const d = newDict();
      for (let i = 0; i < items.length; i += 2) d[keyText(items[i])] = items[i + 1];
      this.stack.push(d);
    }
  }
}

/** CPython's framer may put a FRAME opcode between any two opcodes (every ~64 KiB). */
function skipFrame(buf: Uint8Array, p: number): number {
  return buf[p] === Op.FRAME ? p + 9 : p;
}

function inlineKeyKind(buf: Uint8Array, start: number, length: number): number {
  if (bytesEqualAscii(buf, start, length, 'action')) return KIND_ENTRY;
  if (bytesEqualAscii(buf, start, length, 'name') || bytesEqualAscii(buf, start, length, 'filename')) {
    return KIND_FRAME;
  }
  return KIND_PLAIN;
}

function copyBytes(buf: Uint8Array, start: number, length: number): Uint8Array {
  return buf.slice(start, start + length);
}
