// AssemblyScript, compiled to src/engine/decode/wasm/entry-scan-wasm.ts by `npm run build:wasm`.
//
// The decoder's hottest loop: runs of PyTorch trace entries that all have the shape the JS
// decoder learned from the first one (same key memo references in the same order). JS hands the
// bytes and the learned keys over; this reads as many whole entries as it can and writes each
// pair's value as a double, interning each traceback's sequence of frame memo indices into a
// key. It only reads: JS checks what it cannot (what the memo holds) before anything is
// committed, so any entry this gets wrong in shape is simply not counted and JS reads it.

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
const NO_FRAMES: f64 = -1;
/** Longest inline str interned here (longer ones are left to JS). */
const MAX_TEXT: i32 = 1024;
/** First word of an interned str's sequence (then its byte length and bytes, 4 a word). */
const TEXT_TAG: u32 = 0xffffffff;

let heapTop: usize = 0;
let shapePtr: usize = 0;
let pairs: i32 = 0;
let inPtr: usize = 0;
let inCap: usize = 0;
let outPtr: usize = 0;
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
  tabMask = (1 << 12) - 1;
  tabPtr = reserve((<usize>tabMask + 1) * 4);
  keyCap = 1 << 10;
  keyPtr = reserve(<usize>keyCap * 12);
  poolCap = 1 << 16;
  poolPtr = reserve(<usize>poolCap * 4);
}

/** Where JS writes the learned shape: per pair, key length (2 or 5), key word, kind. */
export function shape(): usize {
  init();
  return shapePtr;
}

export function setPairs(n: i32): void {
  pairs = n;
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
 * Room for `entries` entries, column by column: pair i of entry e is the double at
 * (i * entries + e), and column `pairs` holds where each entry starts.
 */
export function output(entries: i32): usize {
  init();
  const bytes = <usize>entries * <usize>(pairs + 1) * 8;
  if (bytes > outCap) {
    outCap = bytes;
    outPtr = reserve(outCap);
  }
  outRows = entries;
  return outPtr;
}

@inline
function slotOf(e: i32, i: i32): usize {
  return outPtr + ((<usize>i * <usize>outRows + <usize>e) << 3);
}

export function end(): i32 {
  return scanEnd;
}

/** MEMOIZE opcodes in the entries last scanned (each entry's dict and traceback list). */
export function memoizes(): i32 {
  return memoized;
}

export function keys(): u32 {
  return keyCount;
}

export function pool(): usize {
  return poolPtr;
}

export function keyOffset(k: u32): u32 {
  return load<u32>(keyPtr + <usize>k * 12);
}

export function keyLength(k: u32): u32 {
  return load<u32>(keyPtr + <usize>k * 12 + 4);
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
    const slot = slotOf(e, i);
    if (kind === NUM) p = number(p, slot);
    else if (kind === STR) p = text(p, limit, slot);
    else p = frames(p, limit, slot);
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
  // Little-endian two's complement of len bytes, sign-extended from the top byte.
  let v: i64 = 0;
  for (let k = len - 1; k >= 0; k--) v = (v << 8) | <i64>at(s + k);
  if (len > 0 && at(s + len - 1) >= 0x80) v -= <i64>1 << (<i64>(8 * len));
  if (v >= <i64>1 << 53 || v <= -(<i64>1 << 53)) return -1;
  store<f64>(slot, <f64>v);
  return s + len;
}

/**
 * A str: a memo reference (JS checks it is a str), written as its index; or inline and memoized
 * (`SHORT_BINUNICODE/BINUNICODE bytes MEMOIZE`), interned by its bytes and written as -(key + 1).
 */
function text(p: i32, limit: i32, slot: usize): i32 {
  const op = at(p);
  if (op === SHORT_BINUNICODE || op === BINUNICODE) return inlineText(p, limit, slot);
  if (op === BINGET) {
    store<f64>(slot, <f64>at(p + 1));
    return p + 2;
  }
  if (op !== LONG_BINGET) return -1;
  store<f64>(slot, <f64>load<u32>(inPtr + <usize>p + 1));
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
    store<f64>(slot, NO_FRAMES);
    return p + 1;
  }
  if (op === BINGET || op === LONG_BINGET) {
    const index = op === BINGET ? <f64>at(p + 1) : <f64>load<u32>(inPtr + <usize>p + 1);
    store<f64>(slot, -2 - index);
    return p + (op === BINGET ? 2 : 5);
  }
  if (op !== EMPTY_LIST) return -1;
  p = skipFrame(p + 1);
  if (p + MAX_OP > limit || at(p) !== MEMOIZE) return -1;
  memoized++;
  p++;
  let n: u32 = 0;
  let h: u32 = 0x811c9dc5;
  for (;;) {
    p = skipFrame(p);
    if (p + MAX_OP > limit) return -1;
    const first = at(p);
    if (first === MARK) {
      p++;
      for (;;) {
        p = skipFrame(p);
        if (p + MAX_OP > limit) return -1;
        const o = at(p);
        let index: u32 = 0;
        if (o === BINGET) {
          index = <u32>at(p + 1);
          p += 2;
        } else if (o === LONG_BINGET) {
          index = load<u32>(inPtr + <usize>p + 1);
          p += 5;
        } else break;
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
  store<f64>(slot, <f64>intern(n, finish(h, n)));
  return p;
}

function inlineText(p: i32, limit: i32, slot: usize): i32 {
  const short = at(p) === SHORT_BINUNICODE;
  const len = short ? <i32>at(p + 1) : load<i32>(inPtr + <usize>p + 1);
  const start = p + (short ? 2 : 5);
  if (len < 0 || len > MAX_TEXT || start + len + MAX_OP > limit) return -1;
  const words = <u32>((len + 3) >>> 2) + 2;
  while (poolLen + words >= poolCap) growPool();
  const to = poolPtr + (<usize>poolLen << 2);
  store<u32>(to, TEXT_TAG);
  store<u32>(to + 4, <u32>len);
  if (len > 0) store<u32>(to + 8 + (<usize>(words - 3) << 2), 0);
  memory.copy(to + 8, inPtr + <usize>start, <usize>len);
  let h: u32 = 0x811c9dc5;
  for (let i: u32 = 0; i < words; i++) h = (h ^ load<u32>(to + (<usize>i << 2))) * 0x01000193;
  const q = skipFrame(start + len);
  if (q + MAX_OP > limit || at(q) !== MEMOIZE) return -1;
  memoized++;
  store<f64>(slot, -1 - <f64>intern(words, finish(h, words)));
  return q + 1;
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
    const e = keyPtr + <usize>k * 12;
    if (load<u32>(e + 8) === h && load<u32>(e + 4) === n && sameIndices(load<u32>(e), n)) return k;
    slot = (slot + 1) & tabMask;
  }
  if (keyCount === keyCap) growKeys();
  const k = keyCount++;
  const e = keyPtr + <usize>k * 12;
  store<u32>(e, poolLen);
  store<u32>(e + 4, n);
  store<u32>(e + 8, h);
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
  const bigger = reserve(<usize>keyCap * 24);
  memory.copy(bigger, keyPtr, <usize>keyCap * 12);
  keyPtr = bigger;
  keyCap *= 2;
}

function growTable(): void {
  const size = (tabMask + 1) * 2;
  const table = reserve(<usize>size * 4);
  memory.fill(table, 0, <usize>size * 4);
  const mask = size - 1;
  for (let k: u32 = 0; k < keyCount; k++) {
    let slot = load<u32>(keyPtr + <usize>k * 12 + 8) & mask;
    while (load<u32>(table + (<usize>slot << 2)) !== 0) slot = (slot + 1) & mask;
    store<u32>(table + (<usize>slot << 2), k + 1);
  }
  tabPtr = table;
  tabMask = mask;
}
