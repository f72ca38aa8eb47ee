import type { Inert } from '../values/py-values.js';
import type { RowList } from './row-list.js';
import type { StackTable } from './stack-table.js';
import type { TraceColumns } from './trace-columns.js';

/** What a decoder (pickle or JSON) hands the model: plain values plus the columns it filled. */
export interface DecodedPickle {
  root: unknown;
  protocol: number | undefined;
  trace: TraceColumns;
  stacks: StackTable;
  /** Lists in `root` whose entries were decoded into `trace` rows (they stay empty arrays). */
  traceLists: Map<unknown[], RowList>;
  /** Imports/calls the file asked for and memlens did not perform. */
  inert: { count: number; examples: Inert[] };
  /** Trace entries read by the WebAssembly scanner (the rest went through the JS paths). */
  scannedEntries?: number;
}
