import { NO_STACK, type StackTable } from '../model/stack-table.js';
import { Field, type TraceColumns } from '../model/trace-columns.js';
import { decodeUtf8 } from './byte-strings.js';
import { type EntryShape, FRAMES, NUM, STR } from './entry-shape.js';
import { NOT_FRAMES, stackOfFrameRefs } from './frame-refs.js';
import { Memo } from './memo.js';
import { TextCodes } from './text-codes.js';
import { NO_FRAMES, WasmEntryScan } from './wasm-entry-scan.js';

/** What a run needs from the VM. */
export interface RunHost {
  readonly buf: Uint8Array;
  readonly memo: Memo;
  readonly trace: TraceColumns;
  readonly stacks: StackTable;
}

/** Entries per scan: more than a pickle batch (1000), so a run usually ends at its APPENDS. */
const MAX_RUN = 1024;
const UNRESOLVED = -3;
const BASE_FIELDS = [Field.action, Field.addr, Field.size, Field.stream, Field.time_us, Field.frames];
/** A memo code that is not a str's nor a stack's: the entry is left to the VM. */
const BAD = 0;
/** A reference to a memo slot the run itself writes that check cannot resolve column-wise. */
const IN_RUN = -1e9;
/** A memo slot of the run not resolved yet (no memo code is 0). */
const UNSET = 0;

/**
 * Runs of trace entries of the learned shape (EntryShape), read by the WebAssembly scanner and
 * committed here column by column. The scanner knows bytes, not the memo, so each entry is
 * checked first, in file order, against the memo as it will be when the entry is reached
 * (including the slots earlier entries of the run write): string references must be strs,
 * traceback references tracebacks, frame references frame dicts. The run is cut before the
 * first entry that fails, and the VM reads that one its own way, with its errors.
 */
export class EntryRuns {
  /** The first row of the run last read. */
  first = 0;
  /** Position after the run last read. */
  end = 0;
  /** Entries read so far. */
  scanned = 0;
  private scanner: WasmEntryScan | undefined;
  private taught = -1;
  /** The shape has every field beginRows would otherwise default. */
  private everyColumn = false;
  /** Traceback key → stack id. */
  private resolved = new Int32Array(1024).fill(UNRESOLVED);
  /** Inline str key → memo code of its text. */
  private textCodes = new Int32Array(64);
  private readonly texts: TextCodes;
  // Per run: the memo codes it writes, and per entry its text codes and stack.
  private readonly memoCodes = new Int32Array(MAX_RUN * 18);
  private readonly stackIds = new Int32Array(MAX_RUN);
  private readonly textValues = new Int32Array(MAX_RUN * 4);
  /** Per entry, the next memo slot (from the run's first) it writes. */
  private readonly cursor = new Int32Array(MAX_RUN);

  constructor(
    private readonly host: RunHost,
    private readonly shape: EntryShape,
    enabled: boolean,
  ) {
    this.scanner = enabled ? WasmEntryScan.create() : undefined;
    this.texts = new TextCodes(host.trace);
  }

  /** The memo was overwritten: key resolutions may mean other frames now. */
  forget(): void {
    this.resolved.fill(UNRESOLVED);
    this.refTags.fill(-1);
  }

  /** Reads entries from p (just past an EMPTY_DICT); returns how many (rows from `first`). */
  read(p: number, limit: number): number {
    const { scanner, shape } = this;
    if (scanner === undefined || shape.pairs === 0 || !this.host.memo.appendOnly()) return 0;
    if (this.taught !== shape.version) {
      scanner.teach(shape.keyBytes, shape.keyEnds, shape.kinds, shape.pairs);
      this.taught = shape.version;
      this.everyColumn = BASE_FIELDS.every((f) => shape.fields.subarray(0, shape.pairs).includes(f));
    }
    const n = this.scan(scanner, p, limit);
    if (n === 0) return 0;
    const written = this.check(scanner, n);
    const ok = this.checked;
    if (ok > 0) this.commit(scanner, ok, written);
    this.scanned += ok;
    this.end = ok === n ? scanner.end : scanner.start(ok);
    return ok;
  }

  /**
   * The scanner only reads, so if it ever fails (its memory cannot grow past 4 GiB on a file
   * with tens of millions of distinct tracebacks) the JS paths read the rest of the file.
   */
  private scan(scanner: WasmEntryScan, p: number, limit: number): number {
    try {
      return scanner.scan(this.host.buf, p, limit, MAX_RUN);
    } catch {
      this.scanner = undefined;
      return 0;
    }
  }

  /** Entries that passed the last check. */
  private checked = 0;

  /**
   * Resolves every reference of the first n entries; sets `checked` to how many passed and
   * returns how many memo slots those write. Column by column, each distinct value resolved
   * once, unless a reference points into the memo slots of the run itself: then entry by entry
   * (checkRows), as those slots are only known in file order.
   */
  private check(scanner: WasmEntryScan, n: number): number {
    const { memoCodes, refKinds, cursor } = this;
    const size = this.host.memo.size;
    const before = scanner.memoBefore(n);
    memoCodes.fill(UNSET, 0, scanner.memoizes);
    for (let e = 0; e < n; e++) {
      memoCodes[before[e]!] = Memo.ENTRY_CODE;
      cursor[e] = before[e]! + 1;
    }
    const refs = this.refPairs(scanner, n);
    let ok = n;
    for (let j = 0; j < refs.length && ok > 0; j++) {
      ok =
        refKinds[j] === STR
          ? this.checkTexts(scanner, refs[j]!, j, ok, size, before)
          : this.checkStacks(scanner, refs[j]!, ok, size, before);
      if (ok === IN_RUN) return this.checkRows(scanner, n);
    }
    this.checked = ok;
    return ok === n ? scanner.memoizes : before[ok]!;
  }

  /** One text column of the first `ok` entries; returns how many pass, or IN_RUN. */
  private checkTexts(
    scanner: WasmEntryScan,
    column: Float64Array,
    j: number,
    ok: number,
    size: number,
    before: Float64Array,
  ): number {
    const { memoCodes, cursor } = this;
    const codes = this.textValues.subarray(j * MAX_RUN, j * MAX_RUN + ok);
    let last = Number.NaN;
    let code = 0;
    for (let e = 0; e < ok; e++) {
      const v = column[e]!;
      if (v !== last) {
        code = this.textCode(scanner, v, size, before[e]!);
        if (code === IN_RUN) return IN_RUN;
        if (code === BAD) return e;
        last = v;
      }
      codes[e] = code;
      if (v < 0) memoCodes[cursor[e]++] = code;
    }
    return ok;
  }

  /** The traceback column of the first `ok` entries; returns how many pass, or IN_RUN. */
  private checkStacks(
    scanner: WasmEntryScan,
    column: Float64Array,
    ok: number,
    size: number,
    before: Float64Array,
  ): number {
    const { memoCodes, cursor, stackIds } = this;
    let last = Number.NaN;
    let id = 0;
    for (let e = 0; e < ok; e++) {
      const v = column[e]!;
      if (v !== last) {
        id = this.stackCode(scanner, v, size, before[e]!);
        if (id === IN_RUN) return IN_RUN;
        if (id === NOT_FRAMES) return e;
        last = v;
      }
      stackIds[e] = id;
      if (v >= 0) memoCodes[cursor[e]++] = Memo.stackCode(id);
    }
    return ok;
  }

  /**
   * The memo code of text value v (see check), BAD, or IN_RUN. `written`: the run's memo slots
   * written before this entry.
   */
  private textCode(scanner: WasmEntryScan, v: number, size: number, written: number): number {
    if (v < 0) return this.inlineCode(scanner, v);
    if (v < size) return this.textRef(v, 0);
    const code = this.runCode(v - size, written);
    return code === IN_RUN || (code > 0 && typeof this.host.memo.valueOf(code) === 'string') ? code : BAD;
  }

  /** The stack of traceback value v, NOT_FRAMES, or IN_RUN. */
  private stackCode(scanner: WasmEntryScan, v: number, size: number, written: number): number {
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
    const code = r < written ? this.memoCodes[r]! : UNSET;
    return code === UNSET ? IN_RUN : code;
  }

  /** check() entry by entry, for runs that refer to their own memo slots. */
  private checkRows(scanner: WasmEntryScan, n: number): number {
    const { memoCodes, stackIds, textValues, refKinds } = this;
    const refs = this.refPairs(scanner, n);
    const m = refs.length;
    let written = 0;
    let e = 0;
    for (; e < n; e++) {
      const before = written;
      memoCodes[written++] = Memo.ENTRY_CODE;
      let j = 0;
      for (; j < m; j++) {
        const v = refs[j]![e]!;
        if (refKinds[j] === STR) {
          const code = v >= 0 ? this.textRef(v, written) : this.inlineCode(scanner, v);
          if (code === BAD) break;
          if (v < 0) memoCodes[written++] = code;
          textValues[j * MAX_RUN + e] = code;
        } else {
          const id =
            v >= 0
              ? this.stackOf(scanner, v)
              : v === NO_FRAMES
                ? NO_STACK
                : this.sharedStack(-2 - v, written);
          if (id === NOT_FRAMES) break;
          if (v >= 0) memoCodes[written++] = Memo.stackCode(id);
          stackIds[e] = id;
        }
      }
      if (j < m) {
        written = before;
        break;
      }
    }
    this.checked = e;
    return written;
  }

  // Memo index → code of the strs entries refer to, for slots below the memo's size (fixed).
  private readonly refTags = new Int32Array(1024).fill(-1);
  private readonly refCodes = new Int32Array(1024);

  /** The code of the str memo slot `index` holds when the entry is reached, or BAD. */
  private textRef(index: number, written: number): number {
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

  private readonly textOfCode = (code: number): string => this.host.memo.valueOf(code) as string;

  /** Kinds of the text and traceback pairs (in order), and their columns for this run. */
  private readonly refKinds = new Uint8Array(16);
  private refPairs(scanner: WasmEntryScan, n: number): Float64Array[] {
    const shape = this.shape;
    const columns: Float64Array[] = [];
    for (let i = 0; i < shape.pairs; i++) {
      if (shape.kinds[i] === NUM) continue;
      this.refKinds[columns.length] = shape.kinds[i]!;
      columns.push(scanner.column(i, n));
    }
    return columns;
  }

  /** The code memo slot `index` will hold when the entry is reached (`written` slots into the run). */
  private refCode(index: number, written: number): number {
    const memo = this.host.memo;
    if (index < memo.size) return memo.codeAt(index);
    return index - memo.size < written ? this.memoCodes[index - memo.size]! : BAD;
  }

  private sharedStack(index: number, written: number): number {
    const code = this.refCode(index, written);
    return code <= -2 ? Memo.stackOfCode(code) : NOT_FRAMES;
  }

  /** Memo code of the inline str -1 - v, decoded once per distinct text. */
  private inlineCode(scanner: WasmEntryScan, v: number): number {
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

  /** Writes the rows of the first n entries, column by column, and their memo slots. */
  private commit(scanner: WasmEntryScan, n: number, written: number): void {
    const { shape, host } = this;
    const trace = host.trace;
    const first = trace.beginRows(n, this.everyColumn);
    this.first = first;
    let j = 0;
    for (let i = 0; i < shape.pairs; i++) {
      const kind = shape.kinds[i];
      const field = shape.fields[i]! as Field;
      if (kind === NUM) this.commitNumbers(scanner, i, field, first, n);
      else if (kind === FRAMES) {
        trace.stack.set(this.stackIds.subarray(0, n), first);
        j++;
      } else {
        const tags = this.textValues.subarray(j * MAX_RUN, j * MAX_RUN + n);
        this.texts.setRows(first, field, shape.keyName(i), tags, n, this.textOfCode);
        j++;
      }
    }
    host.memo.appendCodes(this.memoCodes, written);
  }

  private commitNumbers(scanner: WasmEntryScan, i: number, field: Field, first: number, n: number): void {
    const trace = this.host.trace;
    const values = scanner.column(i, n);
    if (field === Field.addr) trace.addr.set(values, first);
    else if (field === Field.size) trace.size.set(values, first);
    else if (field === Field.time_us) trace.timeUs.set(values, first);
    else if (field === Field.stream)
      for (let e = 0; e < n; e++) trace.stream[first + e] = trace.streamCode(values[e]!);
    else for (let e = 0; e < n; e++) trace.setNumber(first + e, field, this.shape.keyName(i), values[e]!);
  }

  /** The stack of traceback key k, resolved through the memo once per key. */
  private stackOf(scanner: WasmEntryScan, k: number): number {
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
