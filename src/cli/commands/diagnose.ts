import type { Command } from 'commander';
import { type DeviceDiagnosis, diagnose } from '../../engine/analyses/diagnosis/diagnosis.js';
import type { Finding, FindingKind } from '../../engine/analyses/diagnosis/finding.js';
import type { Frame } from '../../engine/model/stack-table.js';
import { pc } from '../colors.js';
import { framesCell } from '../frames-text.js';
import { type FileOptions, parseBytes, parseDevice, runFiles } from '../run-files.js';

interface DiagnoseCliOptions extends FileOptions {
  capacity?: number;
  evidence?: boolean;
}

/** Evidence lines shown under each headline (all with --evidence). */
const EVIDENCE_SHOWN = 3;
/** Width of text sent to a pipe or file: stable whatever terminal the reader has. */
const PIPE_WIDTH = 100;

/** `memlens diagnose` (and `memlens FILE`): what happened to the GPU memory, most important first. */
export function diagnoseCommand(program: Command): void {
  program
    .command('diagnose', { isDefault: true })
    .description(
      'what happened to my GPU memory: the OOM and its cause, leaks, GC bursts, fragmentation, the peak, and what the file cannot tell (also what `memlens FILE` runs)',
    )
    .argument('[file...]', 'snapshot files (.pickle, .json, optionally gzipped)')
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
      return runFiles(files, opts, (snapshot, devices) => {
        const file = files.length === 1 ? files[0]! : undefined;
        const per = devices.map((d) =>
          diagnose(snapshot, d, {
            file: file ?? 'FILE',
            ...(opts.capacity ? { capacity: opts.capacity } : {}),
          }),
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
  const width = process.stdout.isTTY ? Math.max(60, process.stdout.columns ?? PIPE_WIDTH) : PIPE_WIDTH;
  const lines = [pc.bold(`device ${r.device}`)];
  for (const [i, f] of r.findings.entries()) lines.push(...finding(f, i + 1, shown, width));
  if (r.checked.length > 0) {
    const [head, ...rest] = wrap(`Looked for and not found: ${r.checked.join('; ')}.`, width - 4);
    lines.push(pc.green(`  ✓ ${head}`), ...rest.map((l) => pc.green(`    ${l}`)));
  }
  return lines.join('\n');
}

function finding(f: Finding, n: number, shown: number, width: number): string[] {
  const label = `${n}. ${LABEL[f.kind]}`.padEnd(9);
  const indent = ' '.repeat(11);
  const [first, ...rest] = wrap(f.headline, width - indent.length);
  const colour = f.kind === 'warning' ? pc.yellow : f.kind === 'peak' ? (s: string) => s : pc.red;
  const out = [`  ${colour(pc.bold(label))}${pc.bold(first ?? '')}`, ...rest.map((l) => indent + pc.bold(l))];
  const evidence = f.evidence.slice(0, shown);
  for (const e of evidence) {
    const [head, ...more] = wrap(e, width - indent.length - 2);
    out.push(`${indent}· ${head}`, ...more.map((l) => `${indent}  ${l}`));
  }
  if (f.evidence.length > evidence.length)
    out.push(pc.dim(`${indent}… ${f.evidence.length - evidence.length} more (--evidence)`));
  if (f.kind === 'oom' && f.frames.length > 0) {
    out.push(`${indent}stack of the failing request (innermost first):`);
    for (const line of framesCell(f.frames as Frame[]).split('\n')) out.push(`${indent}  ${line}`);
  }
  out.push(pc.dim(`${indent}→ ${f.command}`));
  return out;
}

/** Words to lines of at most `width` columns (a longer word keeps its own line). */
function wrap(text: string, width: number): string[] {
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(' ')) {
    if (line !== '' && line.length + 1 + word.length > width) {
      lines.push(line);
      line = word;
    } else line = line === '' ? word : `${line} ${word}`;
  }
  if (line !== '') lines.push(line);
  return lines;
}
