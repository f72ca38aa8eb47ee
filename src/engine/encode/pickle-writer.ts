/**
 * Streaming pickle encoder that writes the same bytes as CPython's C pickler (`pickle.dump`) for
 * plain data: protocol 4/5 with 64 KiB frames and MEMOIZE, or protocol 2/3 with BINPUT.
 *
 * Identity: CPython memoizes every dict, list, str, tuple and bytes and refers back to any
 * object it meets twice. Remembering every object would need a table of tens of millions of
 * entries for a gigabyte snapshot, so this writer only recognises objects that can actually
 * recur: values wrapped in `shared()` (slot stored on the wrapper), dict keys (interned by value,
 * as Python's literal and json keys are), and the strings/bytes CPython itself keeps as
 * singletons ('' and single latin-1 characters). Every other container still gets its MEMOIZE,
 * so memo indices stay exactly those CPython would assign. `identity: 'all'` remembers every
 * container by identity instead (small values, cycles, tests).
 */
import { BATCH_SIZE, FRAME_HEADER_SIZE, FRAME_SIZE_MIN, FRAME_SIZE_TARGET, Op } from './pickle-opcodes.js';
import { PyFloat, PyTuple, type PyValue, Shared, StreamedList } from './pickle-values.js';
import { encodeUtf8, encodeUtf8Into } from './utf8.js';

export type PickleSink = (chunk: Uint8Array) => void;

export interface PickleWriterOptions {
  /** 2, 3, 4 (default; what `_dump_snapshot` writes on Python <= 3.13) or 5. */
  protocol?: 2 | 3 | 4 | 5;
  /** Output is handed to the sink in chunks of about this many bytes (default 1 MiB). */
  chunkSize?: number;
  /** 'shared' (default): only `shared()` wrappers are recognised; 'all': every container. */
  identity?: 'shared' | 'all';
}

/** Strings longer than this may encode to >= FRAME_SIZE_TARGET bytes and take the unframed path. */
const LARGE_STRING_CHARS = Math.floor((FRAME_SIZE_TARGET - 1) / 3);
const TWO_POW_31 = 2147483648;

let nextWriterId = 1;

export class PickleWriter {
  private readonly id = nextWriterId++;
  private readonly proto: number;
  private readonly framing: boolean;
  private readonly chunkSize: number;
  private readonly sink: PickleSink;
  private buf: Uint8Array;
  private view: DataView;
  private pos = 0;
  private frameStart = -1;
  private memoNext = 0;
  private dumped = false;
  private readonly keyMemo = new Map<string, number>();
  /** Memo index of CPython's singleton strings/bytes: index 0-255 one char/byte, 256 empty. */
  private readonly strSingletons = new Int32Array(257).fill(-1);
  private readonly bytesSingletons = new Int32Array(257).fill(-1);
  private readonly identity: Map<object, number> | null;

  constructor(sink: PickleSink, options: PickleWriterOptions = {}) {
    this.proto = options.protocol ?? 4;
    if (![2, 3, 4, 5].includes(this.proto)) throw new RangeError(`unsupported pickle protocol ${this.proto}`);
    this.framing = this.proto >= 4;
    this.chunkSize = Math.max(options.chunkSize ?? 1 << 20, 1024);
    this.sink = sink;
    this.identity = options.identity === 'all' ? new Map() : null;
    this.buf = new Uint8Array(this.chunkSize + 2 * FRAME_SIZE_TARGET);
    this.view = new DataView(this.buf.buffer);
  }

  /** Writes one complete pickle of `value` (PROTO ... STOP) and flushes it to the sink. */
  dump(value: PyValue): void {
    if (this.dumped) throw new Error('PickleWriter.dump may be called once');
    this.dumped = true;
    this.ensure(2);
    this.buf[this.pos++] = Op.PROTO;
    this.buf[this.pos++] = this.proto;
    if (this.framing) this.openFrame();
    this.save(value);
    this.ensure(1);
    this.buf[this.pos++] = Op.STOP;
    if (this.framing) this.commitFrame();
    this.flush();
  }

  // ---- buffer and frames ----

  private ensure(n: number): void {
    if (this.pos + n > this.buf.length) this.grow(n);
  }

  private grow(n: number): void {
    const next = new Uint8Array(Math.max(this.buf.length * 2, this.pos + n));
    next.set(this.buf.subarray(0, this.pos));
    this.buf = next;
    this.view = new DataView(next.buffer);
  }

  private flush(): void {
    if (this.pos === 0) return;
    const full = this.buf;
    const n = this.pos;
    // The sink may keep the chunk, so the writer continues in a fresh buffer.
    this.buf = new Uint8Array(full.length);
    this.view = new DataView(this.buf.buffer);
    this.pos = 0;
    this.sink(full.subarray(0, n));
  }

  private openFrame(): void {
    this.ensure(FRAME_HEADER_SIZE);
    this.frameStart = this.pos;
    this.pos += FRAME_HEADER_SIZE;
  }

  private commitFrame(): void {
    const start = this.frameStart;
    const len = this.pos - start - FRAME_HEADER_SIZE;
    if (len >= FRAME_SIZE_MIN) {
      this.buf[start] = Op.FRAME;
      this.view.setUint32(start + 1, len % 0x100000000, true);
      this.view.setUint32(start + 5, Math.floor(len / 0x100000000), true);
    } else {
      this.buf.copyWithin(start, start + FRAME_HEADER_SIZE, this.pos);
      this.pos -= FRAME_HEADER_SIZE;
    }
    this.frameStart = -1;
    if (this.pos >= this.chunkSize) this.flush();
  }

  /** CPython checks the frame size at the start of every save(), so frames end where objects start. */
  private boundary(): void {
    if (this.framing) {
      if (this.pos - this.frameStart - FRAME_HEADER_SIZE >= FRAME_SIZE_TARGET) {
        this.commitFrame();
        this.openFrame();
      }
    } else if (this.pos >= this.chunkSize) {
      this.flush();
    }
  }

  /** str/bytes payloads of a frame's size or more are written outside any frame, as CPython does. */
  private writeUnframed(header: Uint8Array, data: Uint8Array): void {
    if (this.framing) this.commitFrame();
    this.ensure(header.length);
    this.buf.set(header, this.pos);
    this.pos += header.length;
    if (data.length >= this.chunkSize) {
      this.flush();
      this.sink(data);
    } else {
      this.ensure(data.length);
      this.buf.set(data, this.pos);
      this.pos += data.length;
    }
    if (this.framing) this.openFrame();
  }

  // ---- memo ----

  private memoize(): number {
    const index = this.memoNext++;
    if (this.framing) {
      this.ensure(1);
      this.buf[this.pos++] = Op.MEMOIZE;
    } else if (index < 256) {
      this.ensure(2);
      this.buf[this.pos++] = Op.BINPUT;
      this.buf[this.pos++] = index;
    } else {
      this.ensure(5);
      this.buf[this.pos++] = Op.LONG_BINPUT;
      this.view.setUint32(this.pos, index, true);
      this.pos += 4;
    }
    return index;
  }

  /** Memoizes the object just written and records the index where it can be found again. */
  private remember(owner: Shared | null, obj: object | null): number {
    const index = this.memoize();
    if (owner !== null) {
      owner.writerId = this.id;
      owner.memoIndex = index;
    }
    if (this.identity !== null && obj !== null) this.identity.set(obj, index);
    return index;
  }

  private get(index: number): void {
    if (this.pos + 5 > this.buf.length) this.grow(5);
    const buf = this.buf;
    const p = this.pos;
    if (index < 256) {
      buf[p] = Op.BINGET;
      buf[p + 1] = index;
      this.pos = p + 2;
    } else {
      buf[p] = Op.LONG_BINGET;
      buf[p + 1] = index & 0xff;
      buf[p + 2] = (index >>> 8) & 0xff;
      buf[p + 3] = (index >>> 16) & 0xff;
      buf[p + 4] = index >>> 24;
      this.pos = p + 5;
    }
  }

  private op(code: number): void {
    this.ensure(1);
    this.buf[this.pos++] = code;
  }

  // ---- values ----

  private save(v: PyValue, owner: Shared | null = null): void {
    this.boundary();
    switch (typeof v) {
      case 'string':
        this.saveStr(v, owner);
        return;
      case 'number':
        if (Number.isInteger(v)) this.saveInt(v);
        else this.saveFloat(v);
        return;
      case 'boolean':
        this.op(v ? Op.NEWTRUE : Op.NEWFALSE);
        return;
      case 'bigint':
        this.saveBigInt(v);
        return;
      case 'object':
        if (v === null) this.op(Op.NONE);
        else this.saveObject(v, owner);
        return;
      default:
        throw new TypeError(`cannot pickle a value of type ${typeof v}`);
    }
  }

  /** save() with the commonest case first: a shared object already in the memo (frames). */
  private saveItem(v: PyValue): void {
    if (v instanceof Shared && v.writerId === this.id) {
      this.boundary();
      this.get(v.memoIndex);
    } else {
      this.save(v);
    }
  }

  private saveObject(v: object, owner: Shared | null): void {
    if (v instanceof Shared) {
      if (v.writerId === this.id) this.get(v.memoIndex);
      else this.saveFresh(v.value, v);
      return;
    }
    if (this.identity !== null) {
      const seen = this.identity.get(v);
      if (seen !== undefined) {
        this.get(seen);
        return;
      }
    }
    this.saveFresh(v as PyValue, owner);
  }

  /** Writes an object not memoized yet (a shared wrapper's value, or any unshared object). */
  private saveFresh(v: PyValue, owner: Shared | null): void {
    if (typeof v !== 'object' || v === null || v instanceof Shared) {
      this.save(v, owner);
      return;
    }
    if (Array.isArray(v)) this.saveList(v as readonly PyValue[], owner);
    else if (v instanceof PyFloat) this.saveFloat(v.value);
    else if (v instanceof PyTuple) this.saveTuple(v, owner);
    else if (v instanceof StreamedList) this.saveStreamedList(v, owner);
    else if (v instanceof Uint8Array) this.saveBytes(v, owner);
    else if (v instanceof Map) this.saveMap(v, owner);
    else this.saveDict(v as { readonly [key: string]: PyValue }, owner);
  }

  private saveInt(v: number): void {
    if (v >= -TWO_POW_31 && v < TWO_POW_31) {
      this.ensure(5);
      if (v >= 0 && v <= 0xff) {
        this.buf[this.pos++] = Op.BININT1;
        this.buf[this.pos++] = v;
      } else if (v >= 0 && v <= 0xffff) {
        this.buf[this.pos++] = Op.BININT2;
        this.buf[this.pos++] = v & 0xff;
        this.buf[this.pos++] = v >> 8;
      } else {
        this.buf[this.pos++] = Op.BININT;
        this.view.setInt32(this.pos, v, true);
        this.pos += 4;
      }
    } else if (v > 0 && v <= Number.MAX_SAFE_INTEGER) {
      this.saveLong1Positive(v);
    } else {
      this.saveBigInt(BigInt(v));
    }
  }

  /** LONG1 for 2^31 <= v < 2^53 (addresses, timestamps) without BigInt: two 32-bit halves. */
  private saveLong1Positive(v: number): void {
    this.ensure(10);
    const lo = v % 0x100000000;
    let hi = (v - lo) / 0x100000000;
    const buf = this.buf;
    let p = this.pos + 2;
    buf[p++] = lo & 0xff;
    buf[p++] = (lo >>> 8) & 0xff;
    buf[p++] = (lo >>> 16) & 0xff;
    buf[p++] = lo >>> 24;
    let top = lo >>> 24;
    while (hi > 0) {
      top = hi & 0xff;
      buf[p++] = top;
      hi >>>= 8;
    }
    if (top >= 0x80) buf[p++] = 0;
    buf[this.pos] = Op.LONG1;
    buf[this.pos + 1] = p - this.pos - 2;
    this.pos = p;
  }

  private saveBigInt(v: bigint): void {
    if (v >= -2147483648n && v < 2147483648n) {
      this.saveInt(Number(v));
      return;
    }
    const magnitude = v < 0n ? -v - 1n : v;
    const n = (magnitude.toString(2).length >> 3) + 1;
    let u = v < 0n ? (1n << BigInt(8 * n)) + v : v;
    const long4 = n >= 256;
    this.ensure(n + 5);
    this.buf[this.pos++] = long4 ? Op.LONG4 : Op.LONG1;
    if (long4) {
      this.view.setInt32(this.pos, n, true);
      this.pos += 4;
    } else {
      this.buf[this.pos++] = n;
    }
    for (let i = 0; i < n; i++) {
      this.buf[this.pos++] = Number(u & 0xffn);
      u >>= 8n;
    }
  }

  private saveFloat(v: number): void {
    this.ensure(9);
    this.buf[this.pos++] = Op.BINFLOAT;
    this.view.setFloat64(this.pos, v, false);
    this.pos += 8;
  }

  private saveStr(s: string, owner: Shared | null): void {
    if (s.length <= 1) {
      const slot = s.length === 0 ? 256 : s.charCodeAt(0);
      if (s.length === 0 || slot < 256) {
        this.saveSingletonStr(s, slot, owner);
        return;
      }
    }
    this.writeStr(s);
    this.remember(owner, null);
  }

  private saveSingletonStr(s: string, slot: number, owner: Shared | null): void {
    const seen = this.strSingletons[slot]!;
    if (seen >= 0) {
      this.get(seen);
      return;
    }
    this.writeStr(s);
    this.strSingletons[slot] = this.remember(owner, null);
  }

  /** Dict keys: equal keys are one object, as for literal keys in Python code and json-loaded keys. */
  private saveKey(k: string): void {
    this.boundary();
    if (k.length <= 1) {
      this.saveStr(k, null);
      return;
    }
    const seen = this.keyMemo.get(k);
    if (seen !== undefined) {
      this.get(seen);
      return;
    }
    this.writeStr(k);
    this.keyMemo.set(k, this.memoize());
  }

  private writeStr(s: string): void {
    if (s.length > LARGE_STRING_CHARS) {
      this.writeLargeStr(s);
      return;
    }
    if (this.proto >= 4 && s.length < 256) {
      this.ensure(5 + 3 * s.length);
      const n = encodeUtf8Into(s, this.buf, this.pos + 2);
      if (n < 256) {
        this.buf[this.pos] = Op.SHORT_BINUNICODE;
        this.buf[this.pos + 1] = n;
        this.pos += 2 + n;
        return;
      }
      this.buf.copyWithin(this.pos + 5, this.pos + 2, this.pos + 2 + n);
      this.writeBinUnicodeHeader(n);
      return;
    }
    this.ensure(5 + 3 * s.length);
    const n = encodeUtf8Into(s, this.buf, this.pos + 5);
    this.writeBinUnicodeHeader(n);
  }

  /** Header for a payload already placed at pos + 5. */
  private writeBinUnicodeHeader(n: number): void {
    this.buf[this.pos] = Op.BINUNICODE;
    this.view.setUint32(this.pos + 1, n, true);
    this.pos += 5 + n;
  }

  private writeLargeStr(s: string): void {
    const data = encodeUtf8(s);
    const n = data.length;
    if (n < 256 && this.proto >= 4) {
      this.writeSmallPayload(Op.SHORT_BINUNICODE, data);
      return;
    }
    if (n > 0xffffffff && this.proto >= 4) {
      this.writeUnframed(sizedHeader(Op.BINUNICODE8, n, 8), data);
      return;
    }
    if (n > 0xffffffff) throw new RangeError('string too long for pickle protocol < 4');
    const header = sizedHeader(Op.BINUNICODE, n, 4);
    if (n >= FRAME_SIZE_TARGET) {
      this.writeUnframed(header, data);
      return;
    }
    this.ensure(header.length + n);
    this.buf.set(header, this.pos);
    this.buf.set(data, this.pos + header.length);
    this.pos += header.length + n;
  }

  private writeSmallPayload(code: number, data: Uint8Array): void {
    this.ensure(2 + data.length);
    this.buf[this.pos++] = code;
    this.buf[this.pos++] = data.length;
    this.buf.set(data, this.pos);
    this.pos += data.length;
  }

  private saveBytes(b: Uint8Array, owner: Shared | null): void {
    if (this.proto < 3) throw new TypeError('bytes need pickle protocol 3 or later');
    const slot = b.length === 0 ? 256 : b.length === 1 ? b[0]! : -1;
    if (slot >= 0) {
      const seen = this.bytesSingletons[slot]!;
      if (seen >= 0) {
        this.get(seen);
        return;
      }
    }
    const n = b.length;
    if (n <= 0xff) this.writeSmallPayload(Op.SHORT_BINBYTES, b);
    else if (n > 0xffffffff && this.proto >= 4) this.writeUnframed(sizedHeader(Op.BINBYTES8, n, 8), b);
    else if (n >= FRAME_SIZE_TARGET) this.writeUnframed(sizedHeader(Op.BINBYTES, n, 4), b);
    else {
      this.ensure(5 + n);
      this.buf[this.pos] = Op.BINBYTES;
      this.view.setUint32(this.pos + 1, n, true);
      this.buf.set(b, this.pos + 5);
      this.pos += 5 + n;
    }
    const index = this.remember(owner, b);
    if (slot >= 0) this.bytesSingletons[slot] = index;
  }

  private saveTuple(t: PyTuple, owner: Shared | null): void {
    const items = t.items;
    const n = items.length;
    if (n === 0) {
      this.op(Op.EMPTY_TUPLE);
      return;
    }
    if (n > 3) this.op(Op.MARK);
    for (let i = 0; i < n; i++) this.save(items[i]!);
    this.op(n === 1 ? Op.TUPLE1 : n === 2 ? Op.TUPLE2 : n === 3 ? Op.TUPLE3 : Op.TUPLE);
    this.remember(owner, t);
  }

  private saveList(items: readonly PyValue[], owner: Shared | null): void {
    this.op(Op.EMPTY_LIST);
    this.remember(owner, items);
    const n = items.length;
    if (n === 0) return;
    if (n === 1) {
      this.save(items[0]!);
      this.op(Op.APPEND);
      return;
    }
    for (let i = 0; i < n; ) {
      this.op(Op.MARK);
      const end = Math.min(i + BATCH_SIZE, n);
      for (; i < end; i++) this.saveItem(items[i]!);
      this.op(Op.APPENDS);
    }
  }

  /** Same opcodes as saveList; one item of look-ahead tells a one-item list (APPEND) apart. */
  private saveStreamedList(list: StreamedList, owner: Shared | null): void {
    this.op(Op.EMPTY_LIST);
    this.remember(owner, list);
    const it = list.items[Symbol.iterator]();
    const first = it.next();
    if (first.done) return;
    let next = it.next();
    if (next.done) {
      this.save(first.value);
      this.op(Op.APPEND);
      return;
    }
    this.op(Op.MARK);
    this.save(first.value);
    let inBatch = 1;
    while (!next.done) {
      if (inBatch === BATCH_SIZE) {
        this.op(Op.APPENDS);
        this.op(Op.MARK);
        inBatch = 0;
      }
      this.save(next.value);
      inBatch++;
      next = it.next();
    }
    this.op(Op.APPENDS);
  }

  private saveDict(d: { readonly [key: string]: PyValue }, owner: Shared | null): void {
    this.op(Op.EMPTY_DICT);
    this.remember(owner, d);
    // for-in (not Object.keys) lets V8 use the shape's enum cache: no array per dict, fast d[k].
    let n = 0;
    for (const _ in d) n++;
    if (n === 0) return;
    if (n === 1) {
      for (const k in d) {
        this.saveKey(k);
        this.saveItem(checkDefined(d[k], k));
      }
      this.op(Op.SETITEM);
      return;
    }
    // C pickle's batch_dict_exact loops while a batch was full, so a multiple of 1000 items ends
    // with an empty MARK SETITEMS.
    this.op(Op.MARK);
    let inBatch = 0;
    for (const k in d) {
      if (inBatch === BATCH_SIZE) {
        this.op(Op.SETITEMS);
        this.op(Op.MARK);
        inBatch = 0;
      }
      this.saveKey(k);
      this.saveItem(checkDefined(d[k], k));
      inBatch++;
    }
    this.op(Op.SETITEMS);
    if (inBatch === BATCH_SIZE) {
      this.op(Op.MARK);
      this.op(Op.SETITEMS);
    }
  }

  private saveMap(m: ReadonlyMap<PyValue, PyValue>, owner: Shared | null): void {
    this.op(Op.EMPTY_DICT);
    this.remember(owner, m);
    const n = m.size;
    if (n === 0) return;
    const it = m.entries();
    if (n === 1) {
      const [k, v] = it.next().value!;
      this.saveMapKey(k);
      this.save(v);
      this.op(Op.SETITEM);
      return;
    }
    let inBatch: number;
    let entry = it.next();
    do {
      this.op(Op.MARK);
      inBatch = 0;
      while (!entry.done && inBatch < BATCH_SIZE) {
        this.saveMapKey(entry.value[0]);
        this.save(entry.value[1]);
        inBatch++;
        entry = it.next();
      }
      this.op(Op.SETITEMS);
    } while (inBatch === BATCH_SIZE);
  }

  private saveMapKey(k: PyValue): void {
    if (typeof k === 'string') this.saveKey(k);
    else this.save(k);
  }
}

function checkDefined(v: PyValue | undefined, key: string): PyValue {
  if (v === undefined) throw new TypeError(`dict key '${key}' has the value undefined`);
  return v;
}

function sizedHeader(code: number, n: number, width: 4 | 8): Uint8Array {
  const header = new Uint8Array(1 + width);
  const view = new DataView(header.buffer);
  header[0] = code;
  view.setUint32(1, n % 0x100000000, true);
  if (width === 8) view.setUint32(5, Math.floor(n / 0x100000000), true);
  return header;
}

/** Pickles a value into one array (small values, tests). */
export function pickleDumps(value: PyValue, options: PickleWriterOptions = {}): Uint8Array {
  const chunks: Uint8Array[] = [];
  new PickleWriter((c) => chunks.push(c), options).dump(value);
  return concatChunks(chunks);
}

export function concatChunks(chunks: readonly Uint8Array[]): Uint8Array {
  let total = 0;
  for (const c of chunks) total += c.length;
  const out = new Uint8Array(total);
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.length;
  }
  return out;
}
