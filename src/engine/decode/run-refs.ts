import { NO_STACK } from '../model/stack-table.js';
import { decodeUtf8 } from './byte-strings.js';
import type { RunHost } from './entry-runs.js';
import { NOT_FRAMES, stackOfFrameRefs } from './frame-refs.js';
import { Memo } from './memo.js';
import { NO_FRAMES, type WasmEntryScan } from './wasm-entry-scan.js';

/** A memo code that is not a str's nor a stack's: the entry is left to the VM. */
export const BAD = 0;
/** A reference to a memo slot the run itself writes that check cannot resolve column-wise. */
export const IN_RUN = -1e9;
/** A memo slot of the run not resolved yet (no memo code is 0). */
export const UNSET = 0;
const UNRESOLVED = -3;

/**
 * What the references of a run's entries point at, from the values the scanner wrote: the memo
 * code of a str (a memo index, or an inline text the scanner interned), the stack of a traceback
 * (a key of frame memo indices, or a memo reference to one written before). A slot below the
 * memo's size holds what it will hold for good; a slot the run itself writes is read from
 * `runCodes`, the codes the run is about to write, in file order.
 */
export class RunRefs {
  /** Traceback key → stack id. */
  private resolved = new Int32Array(1024).fill(UNRESOLVED);
  /** Inline str key → memo code of its text. */
  private textCodes = new Int32Array(64);

  constructor(
    private readonly host: RunHost,
    private readonly runCodes: Int32Array,
  ) {}

  /** The memo was overwritten: key resolutions and cached slots may mean other values now. */
  forget(): void {
    this.resolved.fill(UNRESOLVED);
    this.refTags.fill(-1);
  }

  /**
   * The memo code of text value v (see check), BAD, or IN_RUN. `written`: the run's memo slots
   * written before this entry.
   */
  textCode(scanner: WasmEntryScan, v: number, size: number, written: number): number {
    if (v < 0) return this.inlineCode(scanner, v);
    if (v < size) return this.textRef(v, 0);
    const code = this.runCode(v - size, written);
    return code === IN_RUN || (code > 0 && typeof this.host.memo.valueOf(code) === 'string') ? code : BAD;
  }

  /** The stack of traceback value v, NOT_FRAMES, or IN_RUN. */
  stackCode(scanner: WasmEntryScan, v: number, size: number, written: number): number {
    if (v >= 0) return this.stackOf(scanner, v);
    if (v === NO_FRAMES) return NO_STACK;
    if (-2 - v < size) return this.sharedStack(-2 - v, 0);
    const code = this.runCode(-2 - v - size, written);
    return code === IN_RUN ? code : code <= -2 ? Memo.stackOfCode(code) : NOT_FRAMES;
  }

  /**
   * The code of the run's memo slot r, filled by an earlier entry: the columns go in pair order,
   * so a slot of an earlier entry is known unless a later column writes it (then IN_RUN, as for
   * a slot of this entry or a later one).
   */
  private runCode(r: number, written: number): number {
    const code = r < written ? this.runCodes[r]! : UNSET;
    return code === UNSET ? IN_RUN : code;
  }

  // Memo index → code of the strs entries refer to, for slots below the memo's size (fixed).
  private readonly refTags = new Int32Array(1024).fill(-1);
  private readonly refCodes = new Int32Array(1024);

  /** The code of the str memo slot `index` holds when the entry is reached, or BAD. */
  textRef(index: number, written: number): number {
    const slot = index & 1023;
    if (this.refTags[slot] === index) return this.refCodes[slot]!;
    const memo = this.host.memo;
    const code = this.refCode(index, written);
    if (code <= 0 || typeof memo.valueOf(code) !== 'string') return BAD;
    if (index < memo.size) {
      this.refTags[slot] = index;
      this.refCodes[slot] = code;
    }
    return code;
  }

  /** The code memo slot `index` will hold when the entry is reached (`written` slots into the run). */
  private refCode(index: number, written: number): number {
    const memo = this.host.memo;
    if (index < memo.size) return memo.codeAt(index);
    return index - memo.size < written ? this.runCodes[index - memo.size]! : BAD;
  }

  sharedStack(index: number, written: number): number {
    const code = this.refCode(index, written);
    return code <= -2 ? Memo.stackOfCode(code) : NOT_FRAMES;
  }

  /** Memo code of the inline str -1 - v, decoded once per distinct text. */
  inlineCode(scanner: WasmEntryScan, v: number): number {
    const k = -1 - v;
    if (k < this.textCodes.length && this.textCodes[k]! > 0) return this.textCodes[k]!;
    const bytes = scanner.textBytes(v);
    const code = this.host.memo.stringCode(decodeUtf8(bytes, 0, bytes.length));
    if (k >= this.textCodes.length) {
      const grown = new Int32Array(Math.max(k + 1, this.textCodes.length * 2));
      grown.set(this.textCodes);
      this.textCodes = grown;
    }
    this.textCodes[k] = code;
    return code;
  }

  /** The stack of traceback key k, resolved through the memo once per key. */
  stackOf(scanner: WasmEntryScan, k: number): number {
    const known = k < this.resolved.length ? this.resolved[k]! : UNRESOLVED;
    if (known !== UNRESOLVED) return known;
    const refs = scanner.refs(k);
    const id = stackOfFrameRefs(this.host.memo, this.host.stacks, refs, refs.length);
    // A key that is not all frames now may be later (slots still empty): do not remember that.
    if (id === NOT_FRAMES) return id;
    if (k >= this.resolved.length) {
      const grown = new Int32Array(Math.max(k + 1, this.resolved.length * 2)).fill(UNRESOLVED);
      grown.set(this.resolved);
      this.resolved = grown;
    }
    this.resolved[k] = id;
    return id;
  }
}
