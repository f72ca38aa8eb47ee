/** The front door of analyses/oom/: what code outside the engine may use of it. */

export type { LastStack, OomReport } from './oom.js';
export { noOomEntryText, oomReports } from './oom.js';
export type { OomReading } from './verdict.js';
