// AssemblyScript, compiled to src/engine/decode/wasm/entry-scan-wasm.ts by `npm run build:wasm`.
//
// The decoder's hottest loop: runs of PyTorch trace entries that all have the shape the JS
// decoder learned from the first one (same key memo references in the same order). JS hands the
// bytes and the learned keys over; this reads as many whole entries as it can and writes each
// pair's value (numbers as doubles, references as i32s), interning each traceback's sequence of
// frame memo indices and each inline str into a key. Then it assembles the run (assemble): the
// memo codes, column codes and stack ids JS commits, from what JS told it about each distinct
// key and memo slot (JS holds the memo). Nothing is committed that JS has not vouched for, so any
// entry this gets wrong in shape, or that refers to the wrong kind of value, is cut off and JS
// reads it.

const MARK: u8 = 0x28;
const BINUNICODE: u8 = 0x58;
const SHORT_BINUNICODE: u8 = 0x8c;
const BININT: u8 = 0x4a;
const BININT1: u8 = 0x4b;
const BININT2: u8 = 0x4d;
const NONE: u8 = 0x4e;
const EMPTY_LIST: u8 = 0x5d;
const APPEND: u8 = 0x61;
const APPENDS: u8 = 0x65;
const BINGET: u8 = 0x68;
const LONG_BINGET: u8 = 0x6a;
const SETITEMS: u8 = 0x75;
const EMPTY_DICT: u8 = 0x7d;
const LONG1: u8 = 0x8a;
const MEMOIZE: u8 = 0x94;
const FRAME: u8 = 0x95;

const NUM: i32 = 0;
const STR: i32 = 1;
const FRAMES: i32 = 2;
const MAX_PAIRS: i32 = 16;
/** The longest opcode this reads whole (FRAME: 1 + 8 bytes). */
const MAX_OP: i32 = 9;
/** A value written for `frames: None`. */
const NO_FRAMES: i32 = -1;
/** Longest inline str interned here (longer ones are left to JS). */
const MAX_TEXT: i32 = 1024;
/** First word of an interned str's sequence (then its byte length and bytes, 4 a word). */
const TEXT_TAG: u32 = 0xffffffff;
/**
 * Per key: pool offset, length, hash, where its traceback's bytes were kept (offset, length), and
 * the memo code JS gave it (0: not yet; see assemble).
 */
const KEY_BYTES: usize = 24;
/** Tracebacks are looked up by their first 32, 64 and 128 bytes: three levels of this many 2-way buckets. */
const HINTS: u32 = 1 << 14;
const HINT_LEVELS: i32 = 3;
/** Longest traceback kept as bytes. */
const MAX_RAW: i32 = 4096;

let heapTop: usize = 0;
let shapePtr: usize = 0;
let pairs: i32 = 0;
let inPtr: usize = 0;
let inCap: usize = 0;
let outPtr: usize = 0;
/** Where the i32 columns start (after the f64 ones). */
let out32Ptr: usize = 0;
let codesPtr: usize = 0;
let memoOutPtr: usize = 0;
let outCap: usize = 0;
let outRows: i32 = 0;
// Interned tracebacks: an open-addressing table of key+1, per key (pool offset, length, hash),
// and a pool of memo indices.
let tabPtr: usize = 0;
let tabMask: u32 = 0;
let keyPtr: usize = 0;
let keyCap: u32 = 0;
let keyCount: u32 = 0;
let poolPtr: usize = 0;
let poolCap: u32 = 0;
let poolLen: u32 = 0;
let scanEnd: i32 = 0;
let hintPtr: usize = 0;
let rawPtr: usize = 0;
let rawCap: u32 = 0;
let rawLen: u32 = 0;
/** Per pair, the key + 1 of the inline text it had last (0: none). */
let lastText: usize = 0;
let memoized: i32 = 0;

function reserve(bytes: usize): usize {
  if (heapTop === 0) heapTop = __heap_base;
  const ptr = (heapTop + 15) & ~(<usize>15);
  const end = ptr + bytes;
  const need = <i32>((end + 0xffff) >>> 16);
  const have = memory.size();
  if (need > have && memory.grow(need - have) < 0) unreachable();
  heapTop = end;
  return ptr;
}

function init(): void {
  if (shapePtr !== 0) return;
  shapePtr = reserve(MAX_PAIRS * 12);
  lastText = reserve(MAX_PAIRS * 4);
  memory.fill(lastText, 0, MAX_PAIRS * 4);
  tabMask = (1 << 12) - 1;
  tabPtr = reserve((<usize>tabMask + 1) * 4);
  keyCap = 1 << 10;
  keyPtr = reserve(<usize>keyCap * KEY_BYTES);
  poolCap = 1 << 16;
  poolPtr = reserve(<usize>poolCap * 4);
  hintPtr = reserve(<usize>HINT_LEVELS * HINTS * 8);
  memory.fill(hintPtr, 0, <usize>HINT_LEVELS * HINTS * 8);
  rawCap = 1 << 16;
  rawPtr = reserve(rawCap);
  memoCachePtr = reserve(<usize>MAX_PAIRS * MEMO_CACHE * 8);
  forgetMemo();
  columnCachePtr = reserve(<usize>MAX_PAIRS * COLUMN_CACHE * 8);
  memory.fill(columnCachePtr, 0, <usize>MAX_PAIRS * COLUMN_CACHE * 8);
}

/** Where JS writes the learned shape: per pair, key length (2 or 5), key word, kind. */
export function shape(): usize {
  init();
  return shapePtr;
}

export function setPairs(n: i32): void {
  pairs = n;
  // Column codes are cached per pair: a new shape may put another field at a pair.
  memory.fill(columnCachePtr, 0, <usize>MAX_PAIRS * COLUMN_CACHE * 8);
}

/** A buffer of at least n bytes for the input (its old content is not kept). */
export function input(n: i32): usize {
  init();
  if (<usize>n > inCap) {
    // Slack past the end: the scanner may peek a few bytes beyond `limit`, never past memory.
    inCap = <usize>n + (<usize>n >>> 2) + 64;
    inPtr = reserve(inCap);
  }
  return inPtr;
}

/**
 * Room for `entries` entries, column by column, in four blocks:
 * - doubles: number pair i of entry e at (i * entries + e); column `pairs`: where each entry starts;
 * - i32s: str and traceback pair i of entry e at (i * entries + e); column `pairs`: how many
 *   MEMOIZEs the run had before the entry;
 * - i32s written by assemble: the column code of str pair i, or the stack id of traceback pair i;
 * - i32s written by assemble: the memo code of every MEMOIZE of the run, in file order.
 */
export function output(entries: i32): usize {
  init();
  const rows = <usize>entries * <usize>(pairs + 1);
  const bytes = rows * 12 + <usize>entries * <usize>pairs * 4 + rows * 4;
  if (bytes > outCap) {
    outCap = bytes;
    outPtr = reserve(outCap);
  }
  outRows = entries;
  out32Ptr = outPtr + rows * 8;
  codesPtr = out32Ptr + rows * 4;
  memoOutPtr = codesPtr + <usize>entries * <usize>pairs * 4;
  return outPtr;
}

/** Where assemble writes the column codes and stack ids (see output). */
export function codesOutput(): usize {
  return codesPtr;
}

/** Where assemble writes the run's memo codes (see output). */
export function memoOutput(): usize {
  return memoOutPtr;
}

/** Where the i32 columns start (see output). */
export function output32(): usize {
  return out32Ptr;
}

@inline
function slotOf(e: i32, i: i32): usize {
  return outPtr + ((<usize>i * <usize>outRows + <usize>e) << 3);
}

@inline
function slot32Of(e: i32, i: i32): usize {
  return out32Ptr + ((<usize>i * <usize>outRows + <usize>e) << 2);
}

export function end(): i32 {
  return scanEnd;
}

/** MEMOIZE opcodes in the entries last scanned (each entry's dict and traceback list). */
export function memoizes(): i32 {
  return memoized;
}

export function pool(): usize {
  return poolPtr;
}

export function keyOffset(k: u32): u32 {
  return load<u32>(keyPtr + <usize>k * KEY_BYTES);
}

export function keyLength(k: u32): u32 {
  return load<u32>(keyPtr + <usize>k * KEY_BYTES + 4);
}

@inline
function at(p: i32): u8 {
  return load<u8>(inPtr + <usize>p);
}

@inline
function skipFrame(p: i32): i32 {
  return at(p) === FRAME ? p + 9 : p;
}

/**
 * Reads whole entries from p, where p is just past the first entry's EMPTY_DICT; stops at
 * `maxEntries`, at anything else, or where an opcode could run past `limit`. Returns the count;
 * `end()` is the position after the last one.
 */
export function scan(p: i32, limit: i32, maxEntries: i32): i32 {
  if (maxEntries > outRows) return 0;
  let count = 0;
  let memo = 0;
  scanEnd = p;
  let opened = true;
  while (count < maxEntries) {
    const start = p;
    if (!opened) {
      p = skipFrame(p);
      if (p + MAX_OP > limit || at(p) !== EMPTY_DICT) break;
      p++;
    }
    opened = false;
    const q = entry(p, limit, count);
    if (q < 0) break;
    store<f64>(slotOf(count, pairs), <f64>start);
    store<i32>(slot32Of(count, pairs), memo);
    memo += memoized;
    p = q;
    scanEnd = q;
    count++;
  }
  memoized = memo;
  return count;
}

/** One entry's `[memo] MARK (key value)* SETITEMS`; -1 if it is not of the learned shape. */
function entry(p: i32, limit: i32, e: i32): i32 {
  memoized = 0;
  p = skipFrame(p);
  if (p + MAX_OP > limit || at(p) !== MEMOIZE) return -1;
  memoized++;
  p = skipFrame(p + 1);
  if (p + MAX_OP > limit || at(p) !== MARK) return -1;
  p++;
  for (let i = 0; i < pairs; i++) {
    p = skipFrame(p);
    if (p + MAX_OP > limit) return -1;
    const s = shapePtr + <usize>i * 12;
    const keyLen = load<i32>(s);
    const word = load<u32>(s + 4);
    if (keyLen === 2) {
      if (<u32>load<u16>(inPtr + <usize>p) !== word) return -1;
    } else if (at(p) !== LONG_BINGET || load<u32>(inPtr + <usize>p + 1) !== word) return -1;
    p = skipFrame(p + keyLen);
    if (p + MAX_OP > limit) return -1;
    const kind = load<i32>(s + 8);
    if (kind === NUM) p = number(p, slotOf(e, i));
    else if (kind === STR) p = text(p, limit, slot32Of(e, i), i);
    else p = frames(p, limit, slot32Of(e, i));
    if (p < 0) return -1;
  }
  p = skipFrame(p);
  if (p + MAX_OP > limit || at(p) !== SETITEMS) return -1;
  return p + 1;
}

/** BININT1/2/4 or a LONG1 exact in a double. */
function number(p: i32, slot: usize): i32 {
  const op = at(p);
  if (op === BININT1) {
    store<f64>(slot, <f64>at(p + 1));
    return p + 2;
  }
  if (op === BININT2) {
    store<f64>(slot, <f64>load<u16>(inPtr + <usize>p + 1));
    return p + 3;
  }
  if (op === BININT) {
    store<f64>(slot, <f64>load<i32>(inPtr + <usize>p + 1));
    return p + 5;
  }
  if (op !== LONG1) return -1;
  const len = <i32>at(p + 1);
  if (len > 7) return -1;
  const s = p + 2;
  // Little-endian two's complement of len bytes: load 8, shift the len bytes to the top and
  // back down with the sign (the bytes past them are within the input's slack).
  const shift = <i64>(64 - 8 * len);
  const v: i64 = len === 0 ? 0 : (load<i64>(inPtr + <usize>s) << shift) >> shift;
  if (v >= <i64>1 << 53 || v <= -(<i64>1 << 53)) return -1;
  store<f64>(slot, <f64>v);
  return s + len;
}

/**
 * A str: a memo reference (JS checks it is a str), written as its index; or inline and memoized
 * (`SHORT_BINUNICODE/BINUNICODE bytes MEMOIZE`), interned by its bytes and written as -(key + 1).
 */
function text(p: i32, limit: i32, slot: usize, pair: i32): i32 {
  const op = at(p);
  if (op === SHORT_BINUNICODE || op === BINUNICODE) return inlineText(p, limit, slot, pair);
  if (op === BINGET) {
    store<i32>(slot, <i32>at(p + 1));
    return p + 2;
  }
  if (op !== LONG_BINGET) return -1;
  const index = load<i32>(inPtr + <usize>p + 1);
  // Indices past 2^31 do not fit the column: JS reads that entry.
  if (index < 0) return -1;
  store<i32>(slot, index);
  return p + 5;
}

/**
 * `None` (written as -1); a memo reference to an earlier traceback (JS checks), written as
 * -2 - index; or a new list of memo references to frame dicts (JS checks): `EMPTY_LIST MEMOIZE`,
 * then batches `MARK ref* APPENDS` or one `ref APPEND`, written as the interned key of the refs.
 */
function frames(p: i32, limit: i32, slot: usize): i32 {
  const op = at(p);
  if (op === NONE) {
    store<i32>(slot, NO_FRAMES);
    return p + 1;
  }
  if (op === BINGET || op === LONG_BINGET) {
    const index = op === BINGET ? <i32>at(p + 1) : load<i32>(inPtr + <usize>p + 1);
    // -2 - index must stay a negative i32: JS reads an entry with a larger index itself.
    if (index < 0 || index > 0x7ffffffd) return -1;
    store<i32>(slot, -2 - index);
    return p + (op === BINGET ? 2 : 5);
  }
  if (op !== EMPTY_LIST) return -1;
  p = skipFrame(p + 1);
  if (p + MAX_OP > limit || at(p) !== MEMOIZE) return -1;
  memoized++;
  p++;
  // A traceback written before is the same bytes again: compare them instead of parsing. The
  // candidates are found by hashing the first 64, 32, then 128 bytes: tracebacks of one operator
  // share their innermost frames, so a short prefix names several of them, while a long one
  // reaches past the end of a short list into bytes that change from entry to entry.
  const hinted = p + 128 + MAX_OP <= limit;
  let b32: usize = 0;
  let b64: usize = 0;
  let b128: usize = 0;
  if (hinted) {
    let h = fnv(0x811c9dc5, p, 0, 32);
    b32 = hintBucket(0, h);
    h = fnv(h, p, 32, 64);
    b64 = hintBucket(1, h);
    let q = knownTraceback(p, limit, b64, slot);
    if (q < 0) q = knownTraceback(p, limit, b32, slot);
    if (q >= 0) return q;
    b128 = hintBucket(2, fnv(h, p, 64, 128));
    q = knownTraceback(p, limit, b128, slot);
    if (q >= 0) return q;
  }
  const q = parseTraceback(p, limit, slot);
  if (hinted && q >= 0) {
    const k = load<u32>(slot);
    remember(p, q, b128, k);
    remember(p, q, b64, k);
    remember(p, q, b32, k);
  }
  return q;
}

/** FNV-1a of h over the words at p + from .. p + to. */
@inline
function fnv(h: u32, p: i32, from: usize, to: usize): u32 {
  for (let i = from; i < to; i += 4) h = (h ^ load<u32>(inPtr + <usize>p + i)) * 0x01000193;
  return h;
}

/** The bucket of hash h among the hints of one prefix length. */
@inline
function hintBucket(level: u32, h: u32): usize {
  return hintPtr + ((<usize>level * HINTS + ((h ^ (h >>> 15)) & (HINTS - 1))) << 3);
}

/** The bucket's tracebacks whose kept bytes are at p, ending where a list must end. */
function knownTraceback(p: i32, limit: i32, bucket: usize, slot: usize): i32 {
  for (let c: usize = 0; c < 2; c++) {
    const k1 = load<u32>(bucket + (c << 2));
    if (k1 === 0) return -1;
    const e = keyPtr + <usize>(k1 - 1) * KEY_BYTES;
    const len = <i32>load<u32>(e + 16);
    if (len === 0 || p + len + MAX_OP > limit) continue;
    if (!sameBytes(rawPtr + <usize>load<u32>(e + 12), inPtr + <usize>p, len)) continue;
    if (listGoesOn(p + len, limit)) continue;
    if (c === 1) {
      store<u32>(bucket + 4, load<u32>(bucket));
      store<u32>(bucket, k1);
    }
    store<u32>(slot, k1 - 1);
    return p + len;
  }
  return -1;
}

function sameBytes(a: usize, b: usize, len: i32): bool {
  let i: usize = 0;
  const n = <usize>len;
  for (; i + 8 <= n; i += 8) if (load<u64>(a + i) !== load<u64>(b + i)) return false;
  for (; i < n; i++) if (load<u8>(a + i) !== load<u8>(b + i)) return false;
  return true;
}

/** Whether the list parsed so far would go on at q (another batch, or one more frame), or might. */
function listGoesOn(q: i32, limit: i32): bool {
  q = skipFrame(q);
  if (q + MAX_OP > limit) return true; // as the parser, which would stop here
  const op = at(q);
  if (op === MARK) return true;
  if (op !== BINGET && op !== LONG_BINGET) return false;
  const r = skipFrame(q + (op === BINGET ? 2 : 5));
  return r + MAX_OP <= limit && at(r) === APPEND;
}

/** Keeps the bytes p..q of key k (its first occurrence only) and puts k first in the bucket. */
function remember(p: i32, q: i32, bucket: usize, k: u32): void {
  const e = keyPtr + <usize>k * KEY_BYTES;
  const len = q - p;
  if (load<u32>(e + 16) === 0 && len > 0 && len <= MAX_RAW) {
    while (rawLen + <u32>len > rawCap) growRaw();
    memory.copy(rawPtr + <usize>rawLen, inPtr + <usize>p, <usize>len);
    store<u32>(e + 12, rawLen);
    store<u32>(e + 16, <u32>len);
    rawLen += <u32>len;
  }
  if (load<u32>(bucket) !== k + 1) {
    store<u32>(bucket + 4, load<u32>(bucket));
    store<u32>(bucket, k + 1);
  }
}

function growRaw(): void {
  const bigger = reserve(<usize>rawCap * 2);
  memory.copy(bigger, rawPtr, <usize>rawCap);
  rawPtr = bigger;
  rawCap *= 2;
}

/** The refs of a traceback list from p (past its MEMOIZE), interned; the position after it. */
function parseTraceback(p: i32, limit: i32, slot: usize): i32 {
  let n: u32 = 0;
  let h: u32 = 0x811c9dc5;
  for (;;) {
    p = skipFrame(p);
    if (p + MAX_OP > limit) return -1;
    const first = at(p);
    if (first === MARK) {
      p++;
      for (;;) {
        if (p + MAX_OP > limit) return -1;
        // BINGET and LONG_BINGET come mixed at random: decode either without a branch.
        const w = load<u32>(inPtr + <usize>p);
        const o = w & 0xff;
        const long = o === LONG_BINGET;
        if (!long && o !== BINGET) {
          if (o !== FRAME) break;
          p += 9;
          continue;
        }
        const index = select<u32>(load<u32>(inPtr + <usize>p + 1), (w >>> 8) & 0xff, long);
        p += select<i32>(5, 2, long);
        if (poolLen + n === poolCap) growPool();
        store<u32>(poolPtr + (<usize>(poolLen + n) << 2), index);
        h = (h ^ index) * 0x01000193;
        n++;
      }
      if (at(p) !== APPENDS) return -1;
      p++;
    } else if (first === BINGET || first === LONG_BINGET) {
      // One frame is `ref APPEND`; a ref not followed by APPEND is the next key: the list is done.
      const index: u32 = first === BINGET ? <u32>at(p + 1) : load<u32>(inPtr + <usize>p + 1);
      const q = skipFrame(p + (first === BINGET ? 2 : 5));
      if (q + MAX_OP > limit || at(q) !== APPEND) break;
      p = q + 1;
      if (poolLen + n === poolCap) growPool();
      store<u32>(poolPtr + (<usize>(poolLen + n) << 2), index);
      h = (h ^ index) * 0x01000193;
      n++;
    } else break;
  }
  store<u32>(slot, intern(n, finish(h, n)));
  return p;
}

function inlineText(p: i32, limit: i32, slot: usize, pair: i32): i32 {
  const short = at(p) === SHORT_BINUNICODE;
  const len = short ? <i32>at(p + 1) : load<i32>(inPtr + <usize>p + 1);
  const start = p + (short ? 2 : 5);
  if (len < 0 || len > MAX_TEXT || start + len + MAX_OP > limit) return -1;
  const q = skipFrame(start + len);
  if (q + MAX_OP > limit || at(q) !== MEMOIZE) return -1;
  memoized++;
  // Entries repeat the same text in the same pair ('N/A', ''): try the pair's last one first.
  const last = lastText + (<usize>pair << 2);
  const k1 = load<u32>(last);
  if (k1 !== 0 && sameText(k1 - 1, start, len)) {
    store<i32>(slot, -<i32>k1);
    return q + 1;
  }
  const k = internText(start, len);
  store<u32>(last, k + 1);
  store<i32>(slot, -1 - <i32>k);
  return q + 1;
}

function sameText(k: u32, start: i32, len: i32): bool {
  const at = poolPtr + (<usize>load<u32>(keyPtr + <usize>k * KEY_BYTES) << 2);
  if (load<u32>(at) !== TEXT_TAG || load<u32>(at + 4) !== <u32>len) return false;
  return sameBytes(at + 8, inPtr + <usize>start, len);
}

function internText(start: i32, len: i32): u32 {
  const words = <u32>((len + 3) >>> 2) + 2;
  while (poolLen + words >= poolCap) growPool();
  const to = poolPtr + (<usize>poolLen << 2);
  store<u32>(to, TEXT_TAG);
  store<u32>(to + 4, <u32>len);
  if (len > 0) store<u32>(to + 8 + (<usize>(words - 3) << 2), 0);
  memory.copy(to + 8, inPtr + <usize>start, <usize>len);
  let h: u32 = 0x811c9dc5;
  for (let i: u32 = 0; i < words; i++) h = (h ^ load<u32>(to + (<usize>i << 2))) * 0x01000193;
  return intern(words, finish(h, words));
}

@inline
function finish(h: u32, n: u32): u32 {
  h ^= n;
  h ^= h >>> 16;
  h *= 0x85ebca6b;
  h ^= h >>> 13;
  return h;
}

/** The key of the n indices just written past the pool's end (kept there only if new). */
function intern(n: u32, h: u32): u32 {
  let slot = h & tabMask;
  for (;;) {
    const k1 = load<u32>(tabPtr + (<usize>slot << 2));
    if (k1 === 0) break;
    const k = k1 - 1;
    const e = keyPtr + <usize>k * KEY_BYTES;
    if (load<u32>(e + 8) === h && load<u32>(e + 4) === n && sameIndices(load<u32>(e), n)) return k;
    slot = (slot + 1) & tabMask;
  }
  if (keyCount === keyCap) growKeys();
  const k = keyCount++;
  const e = keyPtr + <usize>k * KEY_BYTES;
  store<u32>(e, poolLen);
  store<u32>(e + 4, n);
  store<u32>(e + 8, h);
  store<u32>(e + 12, 0);
  store<u32>(e + 16, 0);
  store<i32>(e + 20, 0);
  poolLen += n;
  store<u32>(tabPtr + (<usize>slot << 2), k + 1);
  if (keyCount * 2 > tabMask) growTable();
  return k;
}

function sameIndices(offset: u32, n: u32): bool {
  const a = poolPtr + (<usize>offset << 2);
  const b = poolPtr + (<usize>poolLen << 2);
  for (let i: usize = 0; i < <usize>n; i++) {
    if (load<u32>(a + (i << 2)) !== load<u32>(b + (i << 2))) return false;
  }
  return true;
}

function growPool(): void {
  const bigger = reserve(<usize>poolCap * 8);
  memory.copy(bigger, poolPtr, <usize>poolCap * 4);
  poolPtr = bigger;
  poolCap *= 2;
}

function growKeys(): void {
  const bigger = reserve(<usize>keyCap * 2 * KEY_BYTES);
  memory.copy(bigger, keyPtr, <usize>keyCap * KEY_BYTES);
  keyPtr = bigger;
  keyCap *= 2;
}

function growTable(): void {
  const size = (tabMask + 1) * 2;
  const table = reserve(<usize>size * 4);
  memory.fill(table, 0, <usize>size * 4);
  const mask = size - 1;
  for (let k: u32 = 0; k < keyCount; k++) {
    let slot = load<u32>(keyPtr + <usize>k * KEY_BYTES + 8) & mask;
    while (load<u32>(table + (<usize>slot << 2)) !== 0) slot = (slot + 1) & mask;
    store<u32>(table + (<usize>slot << 2), k + 1);
  }
  tabPtr = table;
  tabMask = mask;
}

// Assembly of a scanned run: what JS needs to commit it, from the codes JS gave for each
// distinct thing the entries refer to (a traceback key, an inline str, a memo slot, a str's
// column code). JS answers a miss once; the millions of entries that repeat it are done here.

/** Why assemble stopped (see `stopped`). */
const DONE: i32 = 0;
/** Key `missed` (a traceback's or an inline str's) has no code yet: JS calls setKeyCode. */
const MISS_KEY: i32 = 1;
/** Memo slot `missed` is not in the cache: JS calls setMemoCode. */
const MISS_MEMO: i32 = 2;
/** The column code of str memo code `missed` in pair `missedPair` is not cached: setColumnCode. */
const MISS_COLUMN: i32 = 3;
/**
 * The entry refers to a memo slot holding the wrong kind of value, or not written yet: it is
 * left to the VM, which reads it its own way, with its errors.
 */
const WRONG_KIND: i32 = 4;

/** A trace entry's dict in the memo (Memo.ENTRY_CODE). */
const ENTRY_CODE: i32 = -1;
/** The memo code of `frames: None` (Memo.stackCode(NO_STACK)). */
const NO_STACK_CODE: i32 = -2;
/**
 * Per str or traceback pair, memo slots whose code is cached (index, code); direct-mapped. One
 * cache per pair: an entry reads each at most once, so answering its misses always completes it.
 */
const MEMO_CACHE: u32 = 1 << 10;
/** Per str pair, column codes cached by memo code (tag, code); direct-mapped. */
const COLUMN_CACHE: u32 = 256;

let memoCachePtr: usize = 0;
let columnCachePtr: usize = 0;
let stopped: i32 = DONE;
let missed: i32 = 0;
let missedPair: i32 = 0;

export function why(): i32 {
  return stopped;
}

export function missedValue(): i32 {
  return missed;
}

export function missedPairIndex(): i32 {
  return missedPair;
}

/** The memo code of key k: a str's (> 0) or a traceback's stack (Memo.stackCode, <= -2). */
export function setKeyCode(k: u32, code: i32): void {
  store<i32>(keyPtr + <usize>k * KEY_BYTES + 20, code);
}

/**
 * The code of memo slot `index` (below the memo's size, so final) for pair `pair`: a str's code,
 * a stack's code, or 0 for anything else.
 */
export function setMemoCode(pair: i32, index: i32, code: i32): void {
  const at = memoSlot(pair, index);
  store<i32>(at, index);
  store<i32>(at + 4, code);
}

@inline
function memoSlot(pair: i32, index: i32): usize {
  return memoCachePtr + ((<usize>pair * MEMO_CACHE + <usize>(<u32>index & (MEMO_CACHE - 1))) << 3);
}

/** Forgets the cached memo slots (JS's memo was overwritten). */
export function forgetMemo(): void {
  init();
  memory.fill(memoCachePtr, 0xff, <usize>MAX_PAIRS * MEMO_CACHE * 8);
}

/** Forgets every key's code (JS's memo was overwritten: frame references may mean other frames). */
export function forgetKeys(): void {
  for (let k: u32 = 0; k < keyCount; k++) store<i32>(keyPtr + <usize>k * KEY_BYTES + 20, 0);
}

export function setColumnCode(pair: i32, tag: i32, code: i32): void {
  const at = columnSlot(pair, tag);
  store<i32>(at, tag);
  store<i32>(at + 4, code);
}

@inline
function columnSlot(pair: i32, tag: i32): usize {
  return columnCachePtr + ((<usize>pair * COLUMN_CACHE + (<usize>tag & (COLUMN_CACHE - 1))) << 3);
}

/** What runCode gives for a slot not written yet (no memo code is this). */
const NOT_WRITTEN: i32 = 0x7fffffff;

/**
 * The code of the run's memo slot r, if an earlier MEMOIZE of the run wrote it (`cursor`: where
 * the entry writes its next one): inline strs (> 0) and tracebacks (<= -2) are what the run
 * memoizes besides its entry dicts.
 */
@inline
function runCode(r: i32, cursor: usize): i32 {
  return <usize>r < (cursor - memoOutPtr) >> 2 ? load<i32>(memoOutPtr + (<usize>r << 2)) : NOT_WRITTEN;
}

@inline
function stop(reason: i32, e: i32): i32 {
  stopped = reason;
  return e;
}

@inline
function miss(reason: i32, value: i32, pair: i32, e: i32): i32 {
  missed = value;
  missedPair = pair;
  return stop(reason, e);
}

/**
 * Writes the column codes, stack ids and memo codes of entries from..n-1 of the run last
 * scanned, `size` being the memo's size at the run's start. Returns the entry it stopped at
 * (n when done) and why (see `why`); JS answers a miss and calls again from that entry.
 */
export function assemble(n: i32, size: i32, from: i32): i32 {
  for (let e = from; e < n; e++) {
    let cursor = memoOutPtr + (<usize>load<i32>(slot32Of(e, pairs)) << 2);
    store<i32>(cursor, ENTRY_CODE);
    cursor += 4;
    for (let i = 0; i < pairs; i++) {
      const kind = load<i32>(shapePtr + <usize>i * 12 + 8);
      if (kind === NUM) continue;
      const v = load<i32>(slot32Of(e, i));
      const out = codesPtr + ((<usize>i * <usize>outRows + <usize>e) << 2);
      if (kind === STR) {
        let code: i32;
        if (v < 0) {
          code = load<i32>(keyPtr + <usize>(-1 - v) * KEY_BYTES + 20);
          if (code === 0) return miss(MISS_KEY, -1 - v, i, e);
          store<i32>(cursor, code);
          cursor += 4;
        } else {
          if (v >= size) code = runCode(v - size, cursor);
          else {
            const at = memoSlot(i, v);
            if (load<i32>(at) !== v) return miss(MISS_MEMO, v, i, e);
            code = load<i32>(at + 4);
          }
          if (code <= 0 || code === NOT_WRITTEN) return stop(WRONG_KIND, e);
        }
        const c = columnSlot(i, code);
        if (load<i32>(c) !== code) return miss(MISS_COLUMN, code, i, e);
        store<i32>(out, load<i32>(c + 4));
      } else {
        let code: i32;
        if (v >= 0) {
          code = load<i32>(keyPtr + <usize>v * KEY_BYTES + 20);
          if (code === 0) return miss(MISS_KEY, v, i, e);
          store<i32>(cursor, code);
          cursor += 4;
        } else if (v === NO_FRAMES) code = NO_STACK_CODE;
        else {
          const index = -2 - v;
          if (index >= size) code = runCode(index - size, cursor);
          else {
            const at = memoSlot(i, index);
            if (load<i32>(at) !== index) return miss(MISS_MEMO, index, i, e);
            code = load<i32>(at + 4);
          }
          if (code > NO_STACK_CODE) return stop(WRONG_KIND, e);
        }
        // Memo.stackOfCode
        store<i32>(out, -code - 3);
      }
    }
  }
  return stop(DONE, n);
}

/**
 * Back to the state of a fresh instance, for the next file: instantiating the module (and its
 * first init) cost more than decoding a small file. Everything reserved is zeroed, as fresh memory
 * is: the key table relies on it. The memory keeps its size (WebAssembly cannot shrink it).
 */
export function reset(): void {
  if (heapTop !== 0) memory.fill(__heap_base, 0, heapTop - __heap_base);
  heapTop = 0;
  shapePtr = 0;
  pairs = 0;
  inPtr = 0;
  inCap = 0;
  outPtr = 0;
  out32Ptr = 0;
  codesPtr = 0;
  memoOutPtr = 0;
  outCap = 0;
  outRows = 0;
  tabPtr = 0;
  tabMask = 0;
  keyPtr = 0;
  keyCap = 0;
  keyCount = 0;
  poolPtr = 0;
  poolCap = 0;
  poolLen = 0;
  scanEnd = 0;
  hintPtr = 0;
  rawPtr = 0;
  rawCap = 0;
  rawLen = 0;
  lastText = 0;
  memoized = 0;
  memoCachePtr = 0;
  columnCachePtr = 0;
  stopped = DONE;
  missed = 0;
  missedPair = 0;
}
