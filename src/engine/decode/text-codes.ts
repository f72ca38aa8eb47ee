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

  /** Whether `tag` is cached for `field` (then set() will not read its text). */
  has(field: Field, tag: number): boolean {
    return this.tags[slotOf(field, tag)] === tag;
  }

  /** Sets `field` of `row` to `text`, known by `tag` (-1: not cacheable). */
  set(row: number, field: Field, key: string, tag: number, text: string): void {
    const trace = this.trace;
    const slot = slotOf(field, tag);
    const column =
      field === Field.action
        ? trace.action
        : field === Field.compile_context
          ? trace.compileContext
          : trace.userMetadata;
    if (tag >= 0 && this.tags[slot] === tag) {
      column![row] = this.codes[slot]!;
      return;
    }
    trace.setField(row, field, key, text);
    if (tag < 0) return;
    this.tags[slot] = tag;
    this.codes[slot] = (
      field === Field.action
        ? trace.action
        : field === Field.compile_context
          ? trace.compileContext
          : trace.userMetadata
    )![row]!;
  }
}

function slotOf(field: Field, tag: number): number {
  const column = field === Field.action ? 0 : field === Field.compile_context ? 1 : 2;
  return column * SLOTS + (tag & (SLOTS - 1));
}
