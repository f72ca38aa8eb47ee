import { NO_STACK, type StackTable } from '../model/stack-table.js';
import { Field, type TraceColumns } from '../model/trace-columns.js';
import { type EntryShape, FRAMES, NUM, STR } from './entry-shape.js';
import { NOT_FRAMES } from './frame-refs.js';
import { Memo } from './memo.js';
import { BAD, IN_RUN, RunRefs, UNSET } from './run-refs.js';
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
const BASE_FIELDS = [Field.action, Field.addr, Field.size, Field.stream, Field.time_us, Field.frames];

/**
 * Runs of trace entries of the learned shape (EntryShape), read by the WebAssembly scanner and
 * committed here column by column. The scanner knows bytes, not the memo, so before anything is
 * written every reference is checked against the memo as it will be when its entry is reached
 * (including the slots earlier entries of the run write, see RunRefs): str references must be
 * strs, traceback references tracebacks, frame references frame dicts. The run is cut before the
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
  /** Bits (1 << Field) of the shape's fields, for beginRows. */
  private fieldBits = 0;
  private readonly texts: TextCodes;
  private readonly refs: RunRefs;
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
    this.refs = new RunRefs(host, this.memoCodes);
  }

  /** The VM reads another buffer (or the same one refilled): the scanner must copy it again. */
  inputChanged(): void {
    this.scanner?.unload();
  }

  /** The memo was overwritten: key resolutions may mean other frames now. */
  forget(): void {
    this.refs.forget();
  }

  /** Reads entries from p (just past an EMPTY_DICT); returns how many (rows from `first`). */
  read(p: number, limit: number): number {
    const { scanner, shape } = this;
    if (scanner === undefined || shape.pairs === 0 || !this.host.memo.appendOnly()) return 0;
    if (this.taught !== shape.version) {
      scanner.teach(shape.keyBytes, shape.keyEnds, shape.kinds, shape.pairs);
      this.taught = shape.version;
      const fields = shape.fields.subarray(0, shape.pairs);
      this.everyColumn = BASE_FIELDS.every((f) => fields.includes(f));
      this.fieldBits = fields.reduce((bits, f) => (f < 31 ? bits | (1 << f) : bits), 0);
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
    column: Int32Array,
    j: number,
    ok: number,
    size: number,
    before: Int32Array,
  ): number {
    const { memoCodes, cursor } = this;
    const codes = this.textValues.subarray(j * MAX_RUN, j * MAX_RUN + ok);
    // Any value but the first (an integer start keeps the comparisons on integers).
    let last = ~column[0]!;
    let code = 0;
    for (let e = 0; e < ok; e++) {
      const v = column[e]!;
      if (v !== last) {
        code = this.refs.textCode(scanner, v, size, before[e]!);
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
    column: Int32Array,
    ok: number,
    size: number,
    before: Int32Array,
  ): number {
    const { memoCodes, cursor, stackIds } = this;
    let last = ~column[0]!;
    let id = 0;
    for (let e = 0; e < ok; e++) {
      const v = column[e]!;
      if (v !== last) {
        id = this.refs.stackCode(scanner, v, size, before[e]!);
        if (id === IN_RUN) return IN_RUN;
        if (id === NOT_FRAMES) return e;
        last = v;
      }
      stackIds[e] = id;
      if (v >= 0) memoCodes[cursor[e]++] = Memo.stackCode(id);
    }
    return ok;
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
          const code = v >= 0 ? this.refs.textRef(v, written) : this.refs.inlineCode(scanner, v);
          if (code === BAD) break;
          if (v < 0) memoCodes[written++] = code;
          textValues[j * MAX_RUN + e] = code;
        } else {
          const id =
            v >= 0
              ? this.refs.stackOf(scanner, v)
              : v === NO_FRAMES
                ? NO_STACK
                : this.refs.sharedStack(-2 - v, written);
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

  private readonly textOfCode = (code: number): string => this.host.memo.valueOf(code) as string;

  /** Kinds of the text and traceback pairs (in order), and their columns for this run. */
  private readonly refKinds = new Uint8Array(16);
  private refPairs(scanner: WasmEntryScan, n: number): Int32Array[] {
    const shape = this.shape;
    const columns: Int32Array[] = [];
    for (let i = 0; i < shape.pairs; i++) {
      if (shape.kinds[i] === NUM) continue;
      this.refKinds[columns.length] = shape.kinds[i]!;
      columns.push(scanner.refColumn(i, n));
    }
    return columns;
  }

  /** Writes the rows of the first n entries, column by column, and their memo slots. */
  private commit(scanner: WasmEntryScan, n: number, written: number): void {
    const { shape, host } = this;
    const trace = host.trace;
    const first = trace.beginRows(n, this.everyColumn, this.fieldBits);
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
    else if (field === Field.stream) commitStreams(trace, values, first, n);
    else for (let e = 0; e < n; e++) trace.setNumber(first + e, field, this.shape.keyName(i), values[e]!);
  }
}

/** Streams change rarely within a run: a raw value is interned once per change. */
function commitStreams(trace: TraceColumns, values: Float64Array, first: number, n: number): void {
  const column = trace.stream;
  let last = Number.NaN;
  let code = 0;
  for (let e = 0; e < n; e++) {
    const v = values[e]!;
    if (v !== last) {
      code = trace.streamCode(v);
      last = v;
    }
    column[first + e] = code;
  }
}
