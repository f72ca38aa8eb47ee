import { u32 } from './bytes.js';
import { ENTRY_SCAN_WASM } from './wasm/entry-scan-wasm.js';

/** The exports of assembly/entry-scan.ts. */
interface ScanExports {
  memory: { buffer: ArrayBuffer; grow(pages: number): number };
  shape(): number;
  setPairs(n: number): void;
  input(n: number): number;
  output(entries: number): number;
  output32(): number;
  codesOutput(): number;
  memoOutput(): number;
  assemble(n: number, size: number, from: number): number;
  why(): number;
  missedValue(): number;
  missedPairIndex(): number;
  setKeyCode(k: number, code: number): void;
  setMemoCode(pair: number, index: number, code: number): void;
  setColumnCode(pair: number, tag: number, code: number): void;
  forgetMemo(): void;
  forgetKeys(): void;
  scan(p: number, limit: number, maxEntries: number): number;
  end(): number;
  memoizes(): number;
  pool(): number;
  keyOffset(k: number): number;
  keyLength(k: number): number;
  reset(): void;
}

/** Just the part of the WebAssembly API used here: the engine's libs may not declare it. */
interface WasmApi {
  Module: new (bytes: Uint8Array) => object;
  Instance: new (module: object, imports: object) => { exports: unknown };
}

/** Why `assemble` stopped (assembly/entry-scan.ts). */
export const Stop = {
  done: 0,
  missKey: 1,
  missMemo: 2,
  missColumn: 3,
  wrongKind: 4,
} as const;
export type Stop = (typeof Stop)[keyof typeof Stop];

let compiled: object | null | undefined;

/**
 * Instances a finished decode handed back, reset: instantiating one (and its first reservations)
 * cost more than decoding a small file, and `memlens run` decodes thousands. A decode takes one for
 * itself, so decodes that interleave (a server's) never share one.
 */
const idle: ScanExports[] = [];
/** Instances kept idle at most, and the largest memory one may keep (a big file's grows it). */
const MAX_IDLE = 4;
const MAX_IDLE_MEMORY = 64 * 2 ** 20;

const PAGE = 65536;
/**
 * The memory a decode's scanner comes to use (6 MiB: the reader's chunk and a batch's output),
 * given at once. Growing memory detaches its old buffer, and the first buffer detached in a
 * thread makes V8 throw away all of that thread's optimized code that reads typed arrays (the
 * decoder's loop with it, ~20 ms of compiling to redo): growing it here, before that code is
 * hot, costs nothing, and pages are only backed once written.
 */
const WORKING_PAGES = (8 * 2 ** 20) / PAGE;

/**
 * The WebAssembly entry scanner (assembly/entry-scan.ts) and typed views of what it writes.
 * `create()` gives undefined where WebAssembly is missing or refused (a strict CSP): the
 * decoder then reads every entry in JS, with the same result.
 */
export class WasmEntryScan {
  private bytes = new Uint8Array(0);
  private doubles = new Float64Array(0);
  private words = new Uint32Array(0);
  private ints = new Int32Array(0);
  private loaded: Uint8Array | undefined;
  private pairs = 0;
  private rows = 0;
  private out = 0;
  private out32 = 0;
  private codesOut = 0;
  private memoOut = 0;

  private constructor(private readonly x: ScanExports) {}

  static create(): WasmEntryScan | undefined {
    const reused = idle.pop();
    if (reused !== undefined) return new WasmEntryScan(reused);
    const api = (globalThis as { WebAssembly?: WasmApi }).WebAssembly;
    if (api === undefined || compiled === null) return undefined;
    try {
      compiled ??= new api.Module(base64Bytes(ENTRY_SCAN_WASM));
      const x = new api.Instance(compiled, {}).exports as ScanExports;
      x.memory.grow(Math.max(0, WORKING_PAGES - x.memory.buffer.byteLength / PAGE));
      return new WasmEntryScan(x);
    } catch {
      compiled = null;
      return undefined;
    }
  }

  /**
   * The decode is over: the instance goes back to the idle ones, reset. A decode that failed
   * part-way never calls this (its instance is simply dropped), nor one whose scanner trapped.
   */
  release(): void {
    if (idle.length >= MAX_IDLE || this.x.memory.buffer.byteLength > MAX_IDLE_MEMORY) return;
    this.x.reset();
    idle.push(this.x);
  }

  /** Sets the learned keys: per pair, its key opcode bytes (2 or 5) and value kind. */
  teach(keys: Uint8Array, keyEnds: Int32Array, kinds: Uint8Array, pairs: number): void {
    const at = this.x.shape();
    this.refresh();
    for (let i = 0; i < pairs; i++) {
      const start = i === 0 ? 0 : keyEnds[i - 1]!;
      const len = keyEnds[i]! - start;
      const word = len === 2 ? keys[start]! | (keys[start + 1]! << 8) : u32(keys, start + 1);
      this.words[(at >> 2) + i * 3] = len;
      this.words[(at >> 2) + i * 3 + 1] = word;
      this.words[(at >> 2) + i * 3 + 2] = kinds[i]!;
    }
    this.x.setPairs(pairs);
    this.pairs = pairs;
  }

  /** Forgets the input copied in: the next scan copies its buffer again. */
  unload(): void {
    this.loaded = undefined;
  }

  /**
   * Reads up to `max` whole entries of the taught shape in `buf` from `p` (just past the first
   * one's EMPTY_DICT), no opcode running past `limit`. Returns how many.
   */
  scan(buf: Uint8Array, p: number, limit: number, max: number): number {
    if (this.loaded !== buf) this.load(buf);
    this.out = this.x.output(max);
    this.out32 = this.x.output32();
    this.codesOut = this.x.codesOutput();
    this.memoOut = this.x.memoOutput();
    this.rows = max;
    const n = this.x.scan(p, limit, max);
    this.refresh();
    return n;
  }

  /** Position after the last entry scanned. */
  get end(): number {
    return this.x.end();
  }

  /** MEMOIZE opcodes in the entries scanned. */
  get memoizes(): number {
    return this.x.memoizes();
  }

  /** Number pair i of the first n entries (a view, as refs). */
  column(i: number, n: number): Float64Array {
    const from = (this.out >> 3) + i * this.rows;
    return this.doubles.subarray(from, from + n);
  }

  /**
   * Writes the column codes, stack ids and memo codes of entries from..n-1 of the run last
   * scanned (see `codes`, `memoCodes`); returns where it stopped, and `why`.
   */
  assemble(n: number, size: number, from: number): number {
    return this.x.assemble(n, size, from);
  }

  get why(): Stop {
    return this.x.why() as Stop;
  }

  /** What assemble missed: a key, a memo index or a str's memo code. */
  get missed(): number {
    return this.x.missedValue();
  }

  /** The pair whose value assemble missed. */
  get missedPair(): number {
    return this.x.missedPairIndex();
  }

  /** The memo code of key k: an inline str's, or a traceback's stack (Memo.stackCode). */
  setKeyCode(k: number, code: number): void {
    this.x.setKeyCode(k, code);
  }

  /** The code of memo slot `index` as assemble reads it in pair `pair`: a str's, a stack's, or 0. */
  setMemoCode(pair: number, index: number, code: number): void {
    this.x.setMemoCode(pair, index, code);
  }

  /** The column code of the str with memo code `tag` in pair `pair`. */
  setColumnCode(pair: number, tag: number, code: number): void {
    this.x.setColumnCode(pair, tag, code);
  }

  /** The memo was overwritten: forget every memo slot's and key's code. */
  forget(): void {
    this.x.forgetMemo();
    this.x.forgetKeys();
  }

  /** Column codes (str pair i) or stack ids (traceback pair i) of the first n entries (a view). */
  codes(i: number, n: number): Int32Array {
    const from = (this.codesOut >> 2) + i * this.rows;
    return this.ints.subarray(from, from + n);
  }

  /** The memo codes of the run's first `count` MEMOIZEs (a view). */
  memoCodes(count: number): Int32Array {
    return this.ints.subarray(this.memoOut >> 2, (this.memoOut >> 2) + count);
  }

  /**
   * Where entry e starts (its EMPTY_DICT, or just past it for the first). A read from a
   * Float64Array is a heap number even when it holds an integer: as the decoder's position it made
   * the VM's loop, optimized for small integers, deoptimize; `>>> 0` gives the same integer (the
   * scanner's input is below 4 GiB) as a small integer.
   */
  start(e: number): number {
    return this.doubles[(this.out >> 3) + this.pairs * this.rows + e]! >>> 0;
  }

  /** Per entry, the MEMOIZEs of the run before it (a view, as refs). */
  memoBefore(n: number): Int32Array {
    const from = (this.out32 >> 2) + this.pairs * this.rows;
    return this.ints.subarray(from, from + n);
  }

  /** The UTF-8 bytes of the inline str interned as key k (a view, as refs). */
  textBytes(k: number): Uint8Array {
    const words = this.refs(k);
    const at = words.byteOffset + 8;
    return this.bytes.subarray(at, at + words[1]!);
  }

  /** The memo indices of traceback key k (a view: read before the next scan). */
  refs(k: number): Uint32Array {
    const from = (this.x.pool() >> 2) + this.x.keyOffset(k);
    return this.words.subarray(from, from + this.x.keyLength(k));
  }

  private load(buf: Uint8Array): void {
    const at = this.x.input(buf.length);
    this.refresh();
    this.bytes.set(buf, at);
    this.loaded = buf;
  }

  /** Views must be remade whenever the module grew its memory. */
  private refresh(): void {
    const buffer = this.x.memory.buffer;
    if (this.bytes.buffer === buffer) return;
    this.bytes = new Uint8Array(buffer);
    this.doubles = new Float64Array(buffer);
    this.words = new Uint32Array(buffer);
    this.ints = new Int32Array(buffer);
  }
}

function base64Bytes(text: string): Uint8Array {
  const s = atob(text);
  const bytes = new Uint8Array(s.length);
  for (let i = 0; i < s.length; i++) bytes[i] = s.charCodeAt(i);
  return bytes;
}
