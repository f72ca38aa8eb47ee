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
  const run = deviceRun(s, d, opts);
  for (const step of STEPS) run.outcomes.set(step, run.analyse(step));
  return assembled(run);
}

/** Every device of a file diagnosed, and one order across them (rank.ts). */
export function diagnoseFile(s: Snapshot, devices: DeviceModel[], opts: DiagnoseOptions = {}): FileDiagnosis {
  let last: FileDiagnosis = { devices: [], order: [] };
  for (const soFar of diagnoseFileSoFar(s, devices, opts)) last = soFar;
  return { devices: last.devices, order: last.order };
}

/** A file's diagnosis with what is known so far, and the analyses still to answer. */
export interface DiagnosisSoFar extends FileDiagnosis {
  /** What is still being looked at, in words ("leaks", "GC bursts"); empty in the last one. */
  pending: string[];
  /**
   * Whether the worst finding known stays the worst: nothing is pending, or it is an OOM and
   * every device's OOMs are in (no other analysis finds one), so a page may land on it now.
   */
  leadKnown: boolean;
}

/**
 * The file's diagnosis as it grows: one answer after each analysis of each device, ranked with
 * the findings known so far; the last is `diagnoseFile`'s. What the model tells at once (an OOM,
 * the peak, the file's warnings) comes first, so a page can show it while the walks over the
 * trace (leaks, GC bursts, fragmentation) still run.
 */
export function* diagnoseFileSoFar(
  s: Snapshot,
  devices: DeviceModel[],
  opts: DiagnoseOptions = {},
): Generator<DiagnosisSoFar> {
  const nameDevice = opts.nameDevice ?? s.devices.length > 1;
  const runs = devices.map((d) => deviceRun(s, d, { ...opts, nameDevice }));
  for (const [i, step] of STEPS.entries()) {
    for (const [k, run] of runs.entries()) {
      run.outcomes.set(step, run.analyse(step));
      // A step is pending until every device has answered it.
      const left = k === runs.length - 1 ? STEPS.slice(i + 1) : STEPS.slice(i);
      yield diagnosisSoFar(runs, left);
    }
  }
  if (runs.length === 0) yield diagnosisSoFar([], []);
}

/** The analyses in the order they run: the model's answers first, then the walks over the trace. */
const STEPS = ['OOM', 'peak', 'warnings', 'leaks', 'GC burst', 'fragmentation'] as const;
type Step = (typeof STEPS)[number];
/** The analyses whose outcome says what was checked, in the order findings are listed before sorting. */
const OUTCOMES: Step[] = ['OOM', 'leaks', 'GC burst', 'fragmentation'];
const LOOKING_AT: Record<Step, string> = {
  OOM: 'OOMs',
  peak: 'the peak',
  warnings: 'what the file cannot tell',
  leaks: 'leaks',
  'GC burst': 'GC bursts',
  fragmentation: 'fragmentation',
};

interface DeviceRun {
  s: Snapshot;
  d: DeviceModel;
  memory: DeviceMemory;
  outcomes: Map<Step, Outcome>;
  analyse(step: Step): Outcome;
}

function deviceRun(s: Snapshot, d: DeviceModel, opts: DiagnoseOptions): DeviceRun {
  const name = shellWord(opts.file ?? 'FILE');
  const file = opts.nameDevice ? `${name} --device ${d.device}` : name;
  const capacity = opts.capacity === undefined ? '' : ` --capacity ${opts.capacity}`;
  const memory = deviceMemory(d, opts.capacity);
  const analyses: Record<Step, () => Outcome> = {
    OOM: () => oomFindings(s, d, `memlens oom ${file}${capacity}`, opts.capacity),
    leaks: () => leakFindings(s, d, file, memory),
    'GC burst': () => gcFinding(s, d, file, opts.cycles),
    fragmentation: () => fragFinding(s, d, file),
    peak: () => ({ findings: peakFinding(s, d, file), clear: null }),
    warnings: () => ({ findings: warningFindings(s, d, file), clear: null }),
  };
  // Each analysis on its own: one that fails on this file is named, and the others still answer.
  const analyse = (step: Step) => isolatedOutcome(step, `memlens summary ${file}`, analyses[step]);
  return { s, d, memory, outcomes: new Map(), analyse };
}

/** A device's findings of the analyses answered so far, worst first. */
function assembled(run: DeviceRun): DeviceDiagnosis {
  const { s, d, memory } = run;
  const outcomes = OUTCOMES.flatMap((step) => run.outcomes.get(step) ?? []);
  const findings = [
    ...outcomes.flatMap((o) => o.findings),
    ...(run.outcomes.get('peak')?.findings ?? []),
    ...(run.outcomes.get('warnings')?.findings ?? []),
  ];
  findings.sort((x, y) => compareFindings(x, memory.bytes, y, memory.bytes));
  const checked = outcomes.flatMap((o) => (o.clear === null ? [] : [o.clear]));
  return { device: d.device, label: deviceName(s.producer, d.device), memory, findings, checked };
}

function diagnosisSoFar(runs: DeviceRun[], left: readonly Step[]): DiagnosisSoFar {
  const devices = runs.map(assembled);
  const order = rankAcross(devices);
  const lead = order[0] && devices.find((d) => d.device === order[0]!.device)?.findings[order[0].finding];
  const leadKnown = left.length === 0 || (!left.includes('OOM') && lead?.severity === 'oom');
  return { devices, order, pending: left.map((step) => LOOKING_AT[step]), leadKnown };
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
