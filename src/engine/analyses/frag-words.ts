/** Columns of the segment_alloc table, the same in the CLI and the web panel. */
export const SEGMENT_ALLOC_COLUMNS = [
  'entry',
  'new segment',
  'for request',
  'reserved before',
  'unallocated before',
  'free in its list (largest)',
];
