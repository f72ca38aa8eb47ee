/** The front door of analyses/diagnosis/: what code outside the engine may use of it. */

export type { DeviceDiagnosis, DiagnosisSoFar, FileDiagnosis } from './diagnosis.js';
export { diagnoseFile, diagnoseFileSoFar } from './diagnosis.js';
export type { Finding, FindingKind, FindingView } from './finding.js';
export { shellWord } from './finding.js';
export type { DeviceMemory } from './rank.js';
export { stakeText } from './rank.js';
