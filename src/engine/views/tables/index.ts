/** The front door of views/tables/: what code outside the engine may use of it. */
export { csvByteChunks, csvCell, csvChunks } from './table-csv.js';
export { jsonRowChunks } from './table-json.js';
export type { TablePage } from './table-window.js';
export { positionOf, tablePage } from './table-window.js';
export type { Cell, RowTable, Selection } from './tables.js';
export { BLOCK_STATES, blockTable, eventTable, selectRows } from './tables.js';
