import { Field, type TraceColumns } from '../model/trace-columns.js';

const SLOTS = 256;

/**
 * The text columns of a trace entry (action, compile_context, user_metadata) by a direct-mapped
 * cache from a tag that identifies the string (a memo index, or a memo code) to the column's code:
 * entries repeat a handful of strings millions of times, so the column's own lookup is rare.
 */
export class TextCodes {
  private readonly tags = new Int32Array(3 * SLOTS).fill(-1);
  private readonly codes = new Int32Array(3 * SLOTS);

  constructor(private readonly trace: TraceColumns) {}

  forget(): void {
    this.tags.fill(-1);
  }

  /** set() for rows first..first+n-1 with tags[0..n): runs of one tag cost a store each. */
  setRows(
    first: number,
    field: Field,
    key: string,
    tags: Int32Array,
    n: number,
    text: (tag: number) => string,
  ): void {
    // compile_context and user_metadata are one text for a whole run: one row set, then a fill.
    let same = 1;
    while (same < n && tags[same] === tags[0]) same++;
    const rows = same === n ? 1 : n;
    let lastTag = -1;
    let lastCode = 0;
    let column = this.columnOf(field);
    for (let e = 0; e < rows; e++) {
      const tag = tags[e]!;
      if (tag !== lastTag) {
        // Entries alternate between a few actions: the cache hit is inlined here.
        const slot = slotOf(field, tag);
        if (tag >= 0 && this.tags[slot] === tag) lastCode = this.codes[slot]!;
        else {
          this.set(first + e, field, key, tag, text(tag));
          column = this.columnOf(field)!;
          lastCode = column[first + e]!;
        }
        lastTag = tag;
      }
      column![first + e] = lastCode;
    }
    if (rows < n) column!.fill(lastCode, first + 1, first + n);
  }

  /** Sets `field` of `row` to `text`, known by `tag` (-1: not cacheable). */
  set(row: number, field: Field, key: string, tag: number, text: string): void {
    const slot = slotOf(field, tag);
    if (tag >= 0 && this.tags[slot] === tag) {
      this.columnOf(field)![row] = this.codes[slot]!;
      return;
    }
    this.trace.setField(row, field, key, text);
    if (tag < 0) return;
    this.tags[slot] = tag;
    this.codes[slot] = this.columnOf(field)![row]!;
  }

  /** The column of a text field (compile_context and user_metadata exist once first set). */
  private columnOf(field: Field): Int32Array | Uint8Array | undefined {
    const trace = this.trace;
    if (field === Field.action) return trace.action;
    return field === Field.compile_context ? trace.compileContext : trace.userMetadata;
  }
}

function slotOf(field: Field, tag: number): number {
  const column = field === Field.action ? 0 : field === Field.compile_context ? 1 : 2;
  return column * SLOTS + (tag & (SLOTS - 1));
}
