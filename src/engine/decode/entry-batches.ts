import type { StackTable } from '../model/stack-table.js';
import { Field, type TraceColumns } from '../model/trace-columns.js';
import { BatchRefs } from './batch-refs.js';
import { type EntryShape, FRAMES, NUM, STR } from './entry-shape.js';
import { NOT_FRAMES } from './frame-refs.js';
import { Memo } from './memo.js';
import { Stop, WasmEntryScan } from './wasm-entry-scan.js';

/** What a run needs from the VM. */
export interface BatchHost {
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
 * committed here column by column. The scanner knows bytes, not the memo, so every reference is
 * checked against the memo as it will be when its entry is reached: str references must be strs,
 * traceback references tracebacks, frame references frame dicts. The scanner assembles the run
 * (memo codes, column codes, stack ids) itself and asks here only for what it has not seen: each
 * distinct key, memo slot and str once. The run is cut before the first entry that fails, and the
 * VM reads that one its own way, with its errors.
 */
export class EntryBatches {
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
  private readonly refs: BatchRefs;

  constructor(
    private readonly host: BatchHost,
    private readonly shape: EntryShape,
    enabled: boolean,
  ) {
    this.scanner = enabled ? WasmEntryScan.create() : undefined;
    this.refs = new BatchRefs(host);
  }

  /** The VM reads another buffer (or the same one refilled): the scanner must copy it again. */
  inputChanged(): void {
    this.scanner?.unload();
  }

  /** The file is decoded: the scanner can serve the next one. */
  release(): void {
    this.scanner?.release();
    this.scanner = undefined;
  }

  /** The memo was overwritten: key resolutions and slot codes may mean other values now. */
  forget(): void {
    this.scanner?.forget();
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
    const ok = this.assemble(scanner, n);
    if (ok > 0) this.commit(scanner, ok, ok === n ? scanner.memoizes : scanner.memoBefore(n)[ok]!);
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

  /** How many of the n entries scanned can be committed, assembled by the scanner. */
  private assemble(scanner: WasmEntryScan, n: number): number {
    const size = this.host.memo.size;
    let e = 0;
    for (;;) {
      e = scanner.assemble(n, size, e);
      const why = scanner.why;
      if (why === Stop.done) return n;
      if (why === Stop.wrongKind || !this.answer(scanner, why)) return e;
    }
  }

  /** Gives the scanner the code it missed; false if the entry is not what the run needs. */
  private answer(scanner: WasmEntryScan, why: Stop): boolean {
    const v = scanner.missed;
    const i = scanner.missedPair;
    if (why === Stop.missMemo) scanner.setMemoCode(i, v, this.refs.slotCode(v));
    else if (why === Stop.missColumn) scanner.setColumnCode(i, v, this.columnCode(i, v));
    else if (this.shape.kinds[i] === STR) scanner.setKeyCode(v, this.refs.inlineCode(scanner, v));
    else {
      const id = this.refs.stackOf(scanner, v);
      if (id === NOT_FRAMES) return false;
      scanner.setKeyCode(v, Memo.stackCode(id));
    }
    return true;
  }

  /** The code of the str with memo code `code` in the column of pair i. */
  private columnCode(i: number, code: number): number {
    return this.host.trace.textCode(this.shape.fields[i]! as Field, this.host.memo.valueOf(code) as string);
  }

  /** Writes the rows of the first n entries, column by column, and their memo slots. */
  private commit(scanner: WasmEntryScan, n: number, written: number): void {
    const { shape, host } = this;
    const trace = host.trace;
    const first = trace.beginRows(n, this.everyColumn, this.fieldBits);
    this.first = first;
    for (let i = 0; i < shape.pairs; i++) {
      const kind = shape.kinds[i];
      const field = shape.fields[i]! as Field;
      if (kind === NUM) this.commitNumbers(scanner, i, field, first, n);
      else if (kind === FRAMES) trace.stack.set(scanner.codes(i, n), first);
      else trace.textColumn(field).set(scanner.codes(i, n), first);
    }
    host.memo.appendCodes(scanner.memoCodes(written), written);
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
