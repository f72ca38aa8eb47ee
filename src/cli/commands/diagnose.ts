import type { Command } from 'commander';
import { type DeviceDiagnosis, diagnose } from '../../engine/analyses/diagnosis/diagnosis.js';
import type { Finding, FindingKind } from '../../engine/analyses/diagnosis/finding.js';
import { jsonInProducerWords } from '../../engine/analyses/producer/wording.js';
import { pc } from '../colors.js';
import { recordedCycles, windowGraphs } from '../cycle-inputs.js';
import { framesCell } from '../frames-text.js';
import { indent as indentText, textWidth, wrapIndented } from '../indent.js';
import { type FileOptions, parseBytes, parseDevice, runFiles } from '../run-files.js';

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
      'print JSON: {"files": [{"file", "devices": [{"device", "findings": [{"kind", "headline", "evidence", ...}]}]}]}',
    )
    .action((files: string[], opts: DiagnoseCliOptions) => {
      // `memlens` alone: the commands, not a complaint about a missing file.
      if (files.length === 0) program.help({ error: true });
      const recorded = recordedCycles(files);
      return runFiles(recorded.snapshotArgs, opts, (snapshot, devices, file) => {
        const cycles = windowGraphs(recorded, snapshot, file);
        const per = devices.map((d) =>
          jsonInProducerWords(
            diagnose(snapshot, d, { file, cycles, ...(opts.capacity ? { capacity: opts.capacity } : {}) }),
            snapshot.producer,
          ),
        );
        return {
          json: { devices: per },
          text: per
            .map((p) => render(p, opts.evidence ? Number.POSITIVE_INFINITY : EVIDENCE_SHOWN))
            .join('\n\n'),
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

function render(r: DeviceDiagnosis, shown: number): string {
  const width = textWidth();
  const lines = [pc.bold(`device ${r.device}`)];
  for (const [i, f] of r.findings.entries()) lines.push(...finding(f, i + 1, shown, width));
  if (r.checked.length > 0)
    lines.push(
      ...wrapIndented(`Looked for and not found: ${r.checked.join('; ')}.`, width, '  ✓ ', '    ').map(
        pc.green,
      ),
    );
  return lines.join('\n');
}

/** The label and headline in bold, the evidence under it, the OOM's stack, the command. */
function finding(f: Finding, n: number, shown: number, width: number): string[] {
  const indent = ' '.repeat(11);
  const label = `  ${`${n}. ${LABEL[f.kind]}`.padEnd(9)}`;
  const colour = f.kind === 'warning' ? pc.yellow : f.kind === 'peak' ? (x: string) => x : pc.red;
  const [first = '', ...rest] = wrapIndented(f.headline, width, label, indent);
  const out = [colour(pc.bold(label)) + pc.bold(first.slice(label.length)), ...rest.map(pc.bold)];
  const evidence = f.evidence.slice(0, shown);
  for (const e of evidence) out.push(...wrapIndented(e, width, `${indent}· `, `${indent}  `));
  if (f.evidence.length > evidence.length)
    out.push(pc.dim(`${indent}… ${f.evidence.length - evidence.length} more (--evidence)`));
  if (f.kind === 'oom' && f.frames.length > 0) {
    out.push(`${indent}stack of the failing request (innermost first):`);
    out.push(indentText(framesCell(f.frames), `${indent}  `));
  }
  out.push(pc.dim(`${indent}→ ${f.command}`));
  return out;
}
