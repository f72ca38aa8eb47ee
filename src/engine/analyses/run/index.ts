/** The front door of analyses/run/: what code outside the engine may use of it. */

export type { CellResult } from './cell-result.js';
export { cellResult, runDevices } from './cell-result.js';
export type { Outlier } from './outliers.js';
export type { RunLead } from './run-lead.js';
export { runLead } from './run-lead.js';
export type { RunReport } from './run-report.js';
export { runReport } from './run-report.js';
export type { RunFigure, RunRow, RunSnapshot } from './run-table.js';
export {
  columnLabel,
  columnOrder,
  laneOrder,
  RUN_FIGURES,
  runComparable,
  stepLabel,
  windowRows,
} from './run-table.js';
export { FIGURE_WORDS, growthHeadline, oomHeadline, outlierHeadline } from './run-words.js';
