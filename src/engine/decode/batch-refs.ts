import { decodeUtf8 } from './byte-strings.js';
import type { BatchHost } from './entry-batches.js';
import { stackOfFrameRefs } from './frame-refs.js';
import type { WasmEntryScan } from './wasm-entry-scan.js';

/** A memo code that is not a str's nor a stack's: an entry referring to it is left to the VM. */
export const BAD = 0;

/**
 * What the scanner asks about the things a run's entries refer to, each once (it keeps the
 * answers): the memo code of an inline str it interned, the stack of a traceback it interned (a
 * key of frame memo indices), the code of a memo slot below the memo's size (which holds what it
 * will hold for good).
 */
export class BatchRefs {
  constructor(private readonly host: BatchHost) {}

  /** The code of memo slot `index` (below the memo's size) if it is a str's or a stack's, else BAD. */
  slotCode(index: number): number {
    const memo = this.host.memo;
    const code = memo.codeAt(index);
    return code <= -2 || (code > 0 && typeof memo.valueOf(code) === 'string') ? code : BAD;
  }

  /** Memo code of the inline str the scanner interned as key k. */
  inlineCode(scanner: WasmEntryScan, k: number): number {
    const bytes = scanner.textBytes(k);
    return this.host.memo.stringCode(decodeUtf8(bytes, 0, bytes.length));
  }

  /**
   * The stack of traceback key k, or NOT_FRAMES: a key that is not all frames now may be later
   * (slots still empty), so that answer is not kept.
   */
  stackOf(scanner: WasmEntryScan, k: number): number {
    const refs = scanner.refs(k);
    return stackOfFrameRefs(this.host.memo, this.host.stacks, refs, refs.length);
  }
}
