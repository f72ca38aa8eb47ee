import type { DeviceModel, Snapshot } from '../../model/snapshot.js';
import type { WindowCycle } from '../cycles/burst-cycles.js';
import { FINDING_KINDS, type Finding, shellWord } from './finding.js';
import { fragFinding } from './frag-finding.js';
import { gcFinding } from './gc-finding.js';
import { leakFindings } from './leak-finding.js';
import { oomFinding } from './oom-finding.js';
import { peakFinding } from './peak-finding.js';
import { warningFindings } from './warning-findings.js';

export interface DiagnoseOptions {
  /** The file's name, as the commands it suggests should name it (default FILE). */
  file?: string;
  /** The GPU's total memory, for the OOM verdict. */
  capacity?: number;
  /** Recorded cycles of this snapshot's window (memlens record --cycles), cited by the GC finding. */
  cycles?: WindowCycle[];
}

export interface DeviceDiagnosis {
  device: number;
  /** Most important first: an OOM, then leaks, GC bursts, fragmentation, the peak, warnings. */
  findings: Finding[];
  /** What was looked for and not found ("no OOM in the trace"); empty when the file cannot tell. */
  checked: string[];
}

/**
 * What happened to one device's memory, as ranked findings composed from the analyses (each
 * finding module calls its analysis and keeps only what its evidence supports).
 */
export function diagnose(s: Snapshot, d: DeviceModel, opts: DiagnoseOptions = {}): DeviceDiagnosis {
  const file = shellWord(opts.file ?? 'FILE');
  const oomCommand =
    opts.capacity === undefined ? `memlens oom ${file}` : `memlens oom ${file} --capacity ${opts.capacity}`;
  const outcomes = [
    oomFinding(s, d, oomCommand, opts.capacity),
    leakFindings(s, d, file),
    gcFinding(s, d, file, opts.cycles),
    fragFinding(s, d, file),
  ];
  const findings = [
    ...outcomes.flatMap((o) => o.findings),
    ...peakFinding(s, d, file),
    ...warningFindings(s, d, file),
  ];
  const rank = (f: Finding) => FINDING_KINDS.indexOf(f.kind);
  // A stable sort: within a kind, each module's own order (largest first).
  findings.sort((x, y) => rank(x) - rank(y));
  const checked = outcomes.flatMap((o) => (o.clear === null ? [] : [o.clear]));
  return { device: d.device, findings, checked };
}
