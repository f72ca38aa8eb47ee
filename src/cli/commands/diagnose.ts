import type { Command } from 'commander';
import type { Finding, FindingKind } from '../../engine/analyses/diagnosis/index.js';
import {
  type DeviceDiagnosis,
  diagnoseFile,
  type FileDiagnosis,
  stakeText,
} from '../../engine/analyses/diagnosis/index.js';
import { jsonInProducerWords } from '../../engine/analyses/producer/index.js';
import { recordedCycles, windowGraphs } from '../../node/cycles/cycle-inputs.js';
import { pc } from '../text/colors.js';
import { commandLines } from '../text/command-lines.js';
import { framesCell } from '../text/frames-text.js';
import { indent as indentText, textWidth, wrapIndented } from '../text/indent.js';
import { type FileOptions, parseBytes, parseDevice, runFiles } from '../text/run-files.js';

interface DiagnoseCliOptions extends FileOptions {
  capacity?: number;
  evidence?: boolean;
}

/** Evidence lines shown under each headline (all with --evidence). */
const EVIDENCE_SHOWN = 3;

/** `memlens diagnose` (and `memlens FILE`): what happened to the GPU memory, most important first. */
export function diagnoseCommand(program: Command): void {
  program
    .command('diagnose', { isDefault: true })
    .description(
      'what happened to my GPU memory: the OOM and its cause, leaks, GC bursts, fragmentation, the peak, and what the file cannot tell (also what `memlens FILE` runs)',
    )
    .argument(
      '[file...]',
      'snapshot files (.pickle, .json, optionally gzipped) or run directories; recorded cycles (memlens record --cycles) given alongside or in a run are cited',
    )
    .option('--capacity <size>', "the GPU's total memory (80GiB), for the OOM verdict", parseBytes)
    .option('--evidence', 'every evidence line, not only the first few')
    .option('--device <n>', 'only this device', parseDevice)
    .option(
      '--json',
      'print JSON: {"files": [{"file", "devices": [{"device", "findings": [{"kind", "headline", "evidence", ...}]}], "order": [{"device", "finding"}]}]}',
    )
    .action((files: string[], opts: DiagnoseCliOptions) => {
      // `memlens` alone: the commands, not a complaint about a missing file.
      if (files.length === 0) program.help({ error: true });
      const recorded = recordedCycles(files);
      return runFiles(recorded.snapshotArgs, opts, (snapshot, devices, file) => {
        const cycles = windowGraphs(recorded, snapshot, file);
        const r = jsonInProducerWords(
          diagnoseFile(snapshot, devices, {
            file,
            cycles,
            ...(opts.capacity ? { capacity: opts.capacity } : {}),
          }),
          snapshot.producer,
        );
        return {
          json: { devices: r.devices, order: r.order },
          text: render(r, opts.evidence ? Number.POSITIVE_INFINITY : EVIDENCE_SHOWN),
        };
      });
    });
}

const LABEL: Record<FindingKind, string> = {
  oom: 'OOM',
  leak: 'LEAK',
  gc: 'GC',
  fragmentation: 'FRAG',
  peak: 'PEAK',
  warning: 'NOTE',
};

/**
 * Every device's findings in one list, worst first (each with its device when the file has
 * several), then what each device was checked for and did not show.
 */
function render(r: FileDiagnosis, shown: number): string {
  const width = textWidth();
  const several = r.devices.length > 1;
  const head = several
    ? `${r.devices.map((d) => d.label).join(', ')}: every device's findings, worst first`
    : (r.devices[0]?.label ?? '');
  const lines = [pc.bold(head)];
  for (const [i, at] of r.order.entries()) {
    const d = r.devices.find((x) => x.device === at.device)!;
    lines.push(...finding(d.findings[at.finding]!, i + 1, shown, width, several ? d : null, d));
  }
  for (const d of r.devices) lines.push(...checkedLines(d, several, width));
  return lines.join('\n');
}

/** What a device was looked at for and did not show; on a device with no problem, that it has none. */
function checkedLines(d: DeviceDiagnosis, several: boolean, width: number): string[] {
  if (d.checked.length === 0) return [];
  const problems = d.findings.some((f) => f.severity !== 'context' && f.severity !== 'note');
  const who = several ? `${d.label}: ` : '';
  const text = problems
    ? `${who}Looked for and not found: ${d.checked.join('; ')}.`
    : `${who}No problem found. Looked for: ${d.checked.join('; ')}.`;
  return wrapIndented(text, width, '  ✓ ', '    ').map(pc.green);
}

/** The label and headline in bold, the evidence under it, the OOM's stack, the command. */
function finding(
  f: Finding,
  n: number,
  shown: number,
  width: number,
  named: DeviceDiagnosis | null,
  d: DeviceDiagnosis,
): string[] {
  const indent = ' '.repeat(11);
  const label = `  ${`${n}. ${LABEL[f.kind]}`.padEnd(9)}`;
  const colour = f.kind === 'warning' ? pc.yellow : f.kind === 'peak' ? (x: string) => x : pc.red;
  const [first = '', ...rest] = wrapIndented(f.headline, width, label, indent);
  const out = [colour(pc.bold(label)) + pc.bold(first.slice(label.length)), ...rest.map(pc.bold)];
  const meta = [named?.label, stakeText(f, d.memory)].filter((x) => x !== undefined && x !== '');
  if (meta.length > 0) out.push(...wrapIndented(meta.join(' · '), width, indent).map(pc.dim));
  const evidence = f.evidence.slice(0, shown);
  for (const e of evidence) out.push(...wrapIndented(e, width, `${indent}· `, `${indent}  `));
  if (f.evidence.length > evidence.length)
    out.push(pc.dim(`${indent}… ${f.evidence.length - evidence.length} more (--evidence)`));
  if (f.kind === 'oom' && f.frames.length > 0) {
    out.push(`${indent}stack of the failing request (innermost first):`);
    out.push(indentText(framesCell(f.frames), `${indent}  `));
  }
  out.push(...commandLines(f.command, width, indent).map(pc.dim));
  return out;
}
