/** The front door of analyses/cycles/: what code outside the engine may use of it. */

export type { CycleCitation, WindowCycle } from './burst-cycles.js';
export { citationText, citeWindowCycles } from './burst-cycles.js';
export type { CycleGraph } from './cycle-file.js';
export { parseCycleText } from './cycle-file.js';
export { layoutCycle } from './cycle-layout.js';
export type { CycleReport, CycleTensorReport, WindowMatch } from './cycle-report.js';
export { cycleReport, gcCache, holdsCudaTensors, NO_CUDA_TENSOR } from './cycle-report.js';
export type { TimeSpan } from './cycle-windows.js';
export {
  candidateCells,
  holdsStep,
  noWindowReason,
  spanHolds,
  traceSpan,
  windowCycles,
} from './cycle-windows.js';
export {
  allocationText,
  burstText,
  cycleTitle,
  heldText,
  recordedSiteText,
  tensorText,
  wallClockText,
  windowText,
} from './cycle-words.js';
