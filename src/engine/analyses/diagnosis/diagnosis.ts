import { deviceName } from '../../model/producer.js';
import type { DeviceModel, Snapshot } from '../../model/snapshot.js';
import type { WindowCycle } from '../cycles/burst-cycles.js';
import { type Finding, type Outcome, shellWord } from './finding.js';
import { fragFinding } from './frag-finding.js';
import { gcFinding } from './gc-finding.js';
import { leakFindings } from './leak-finding.js';
import { oomFindings } from './oom-finding.js';
import { peakFinding } from './peak-finding.js';
import { compareFindings, type DeviceMemory, deviceMemory, type RankedFinding, rankAcross } from './rank.js';
import { warning, warningFindings } from './warning-findings.js';

export interface DiagnoseOptions {
  /** The file's name, as the commands it suggests should name it (default FILE). */
  file?: string;
  /** The GPU's total memory, for the OOM verdict. */
  capacity?: number;
  /** Recorded cycles of this snapshot's window (memlens record --cycles), cited by the GC finding. */
  cycles?: WindowCycle[];
  /** Commands name the device (--device N): the file holds several. */
  nameDevice?: boolean;
}

export interface DeviceDiagnosis {
  device: number;
  /** The device as findings name it ("cuda:1"). */
  label: string;
  /** The memory bytes at stake are weighed against (rank.ts). */
  memory: DeviceMemory;
  /** Worst first: by outcome (an OOM; growth that would exhaust the device; costs), then bytes at stake. */
  findings: Finding[];
  /** What was looked for and not found ("no OOM in the trace"); empty when the file cannot tell. */
  checked: string[];
}

/** Every device's diagnosis, and all their findings in one order, worst first. */
export interface FileDiagnosis {
  devices: DeviceDiagnosis[];
  order: RankedFinding[];
}

/**
 * What happened to one device's memory, as ranked findings composed from the analyses (each
 * finding module calls its analysis and keeps only what its evidence supports).
 */
export function diagnose(s: Snapshot, d: DeviceModel, opts: DiagnoseOptions = {}): DeviceDiagnosis {
  const name = shellWord(opts.file ?? 'FILE');
  const file = opts.nameDevice ? `${name} --device ${d.device}` : name;
  const capacity = opts.capacity === undefined ? '' : ` --capacity ${opts.capacity}`;
  const memory = deviceMemory(d, opts.capacity);
  // Each analysis on its own: one that fails on this file is named, and the others still answer.
  const isolated = (what: string, analyse: () => Outcome) =>
    isolatedOutcome(what, `memlens summary ${file}`, analyse);
  const outcomes = [
    isolated('OOM', () => oomFindings(s, d, `memlens oom ${file}${capacity}`, opts.capacity)),
    isolated('leaks', () => leakFindings(s, d, file, memory)),
    isolated('GC burst', () => gcFinding(s, d, file, opts.cycles)),
    isolated('fragmentation', () => fragFinding(s, d, file)),
  ];
  const findings = [
    ...outcomes.flatMap((o) => o.findings),
    ...isolated('peak', () => ({ findings: peakFinding(s, d, file), clear: null })).findings,
    ...isolated('warnings', () => ({ findings: warningFindings(s, d, file), clear: null })).findings,
  ];
  findings.sort((x, y) => compareFindings(x, memory.bytes, y, memory.bytes));
  const checked = outcomes.flatMap((o) => (o.clear === null ? [] : [o.clear]));
  return { device: d.device, label: deviceName(s.producer, d.device), memory, findings, checked };
}

/** Every device of a file diagnosed, and one order across them (rank.ts). */
export function diagnoseFile(s: Snapshot, devices: DeviceModel[], opts: DiagnoseOptions = {}): FileDiagnosis {
  const nameDevice = opts.nameDevice ?? s.devices.length > 1;
  const per = devices.map((d) => diagnose(s, d, { ...opts, nameDevice }));
  return { devices: per, order: rankAcross(per) };
}

/** The analysis's outcome, or a note that names it and what went wrong. */
function isolatedOutcome(name: string, command: string, analyse: () => Outcome): Outcome {
  try {
    return analyse();
  } catch (e) {
    const why = e instanceof Error ? e.message.split('\n')[0] : String(e);
    return {
      findings: [
        warning(`The ${name} analysis failed on this device (${why}); the other findings stand.`, command),
      ],
      clear: null,
    };
  }
}
