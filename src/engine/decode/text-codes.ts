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

  /** Sets `field` of `row` to `text`, known by `tag` (-1: not cacheable). */
  set(row: number, field: Field, key: string, tag: number, text: string): void {
    const slot = slotOf(field, tag);
    if (tag >= 0 && this.tags[slot] === tag) {
      this.trace.textColumn(field)[row] = this.codes[slot]!;
      return;
    }
    this.trace.setField(row, field, key, text);
    if (tag < 0) return;
    this.tags[slot] = tag;
    this.codes[slot] = this.trace.textColumn(field)[row]!;
  }
}

function slotOf(field: Field, tag: number): number {
  const column = field === Field.action ? 0 : field === Field.compile_context ? 1 : 2;
  return column * SLOTS + (tag & (SLOTS - 1));
}
