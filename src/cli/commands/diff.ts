import { type Command, InvalidArgumentError } from 'commander';
import {
  type DeviceDiff,
  diffSides,
  type Matching,
  type MomentDiff,
} from '../../engine/analyses/diff/index.js';
import { formatBytes, formatCount } from '../../engine/base/index.js';
import { pickCell } from '../../engine/run-layout/index.js';
import { expandPaths } from '../../node/files/expand-paths.js';
import { progressFor } from '../../node/files/progress.js';
import { EXIT_BAD_INPUT, reportError } from '../../node/files/report-error.js';
import { diffSidesInParallel, totalSize } from '../../node/workers/parallel-decode.js';
import { pc } from '../text/colors.js';
import { framesCell, sitesTable } from '../text/frames-text.js';
import { indent } from '../text/indent.js';
import { type FileOptions, parseCount, parseDevice } from '../text/run-files.js';

interface DiffCliOptions extends FileOptions {
  top: number;
  fullStacks?: boolean;
  steps?: [number, number];
  ranks?: [number, number];
  step?: number;
  rank?: number;
  replica?: number;
}

/** `memlens diff A B`: two steps or two ranks, and the code whose live memory differs. */
export function diffCommand(program: Command): void {
  program
    .command('diff')
    .description(
      'compare two snapshots (two steps or two ranks): totals, peaks, and live memory by allocating site',
    )
    .argument('<a>', 'first snapshot, or a run directory with --steps/--rank or --ranks/--step')
    .argument('[b]', 'second snapshot (differences are B − A)')
    .option('--steps <a,b>', 'in a run directory: compare these two steps (of --rank)', parsePair)
    .option('--rank <n>', 'in a run directory: the rank whose steps are compared', parseCount)
    .option('--ranks <a,b>', 'in a run directory: compare these two ranks (at --step)', parsePair)
    .option('--step <n>', 'in a run directory: the step at which ranks are compared', parseCount)
    .option(
      '--replica <k>',
      'in a torchft run: the replica group whose cells are compared (default: the lowest)',
      parseCount,
    )
    .option('--top <n>', 'how many differing sites to list', parseCount, 10)
    .option('--full-stacks', 'match whole stacks, not only the frames in your own code')
    .option('--device <n>', 'only this device (in both files)', parseDevice)
    .option('--json', 'print JSON: {"files": [{"file": A}, {"file": B}], "devices": [...]}')
    .action(async (first: string, second: string | undefined, opts: DiffCliOptions) => {
      const [a, b] = filesToCompare(first, second, opts);
      const sides = await loadSides([a, b], opts);
      const files = [a, b].map((file, i) => {
        const r = sides[i]!;
        return 'error' in r ? { file, error: r.error } : { file };
      });
      const [ra, rb] = sides;
      if ('error' in ra! || 'error' in rb!) {
        if (opts.json) process.stdout.write(`${JSON.stringify({ files, devices: [] }, null, 1)}\n`);
        process.exitCode = EXIT_BAD_INPUT;
        return;
      }
      const diff = diffSides(ra!.side, rb!.side, opts.top);
      if (opts.json) {
        process.stdout.write(`${JSON.stringify({ files, ...diff }, null, 1)}\n`);
        return;
      }
      const text = diff.devices.map((d) => render(d)).join('\n\n');
      const unmatched = [
        ...diff.unmatched.a.map((d) => `${d.label} is only in A`),
        ...diff.unmatched.b.map((d) => `${d.label} is only in B`),
      ];
      process.stdout.write(
        `A: ${a}\nB: ${b}\n${text}${unmatched.length ? `\n${unmatched.join('\n')}` : ''}\n`,
      );
    });
}

/**
 * Two files as given, or two cells of a run directory: two steps of one rank (--steps A,B
 * --rank R) or two ranks at one step (--ranks A,B --step S).
 */
function filesToCompare(first: string, second: string | undefined, opts: DiffCliOptions): [string, string] {
  const cellOptions = opts.steps ?? opts.ranks ?? opts.step ?? opts.rank ?? opts.replica;
  if (second !== undefined) {
    if (cellOptions !== undefined)
      throw new Error(
        '--steps/--rank/--ranks/--step/--replica pick two cells of one run directory: give the directory alone',
      );
    return [first, second];
  }
  const dir = expandPaths([first]).runs[0];
  if (dir === undefined)
    throw new Error(
      `${first}: give a second snapshot, or a run directory with --steps A,B --rank R or --ranks A,B --step S`,
    );
  const pairs: [number, number][] | null =
    opts.steps && opts.rank !== undefined
      ? opts.steps.map((s) => [opts.rank!, s])
      : opts.ranks && opts.step !== undefined
        ? opts.ranks.map((r) => [r, opts.step!])
        : null;
  if (pairs === null)
    throw new Error(
      `${first} is a run: say which cells to compare (--steps A,B --rank R, or --ranks A,B --step S)`,
    );
  const picked = pairs.map(([rank, step]) => {
    const p = pickCell(dir.run, rank, step, opts.replica ?? null);
    if ('error' in p) throw new Error(`${first}: ${p.error}`);
    return p;
  });
  for (const note of new Set(picked.map((p) => p.note)))
    if (note !== null) process.stderr.write(`memlens: ${note}\n`);
  return picked.map((p) => p.cell.path) as [string, string];
}

function parsePair(v: string): [number, number] {
  const parts = v.split(',').map((p) => parseCount(p.trim()));
  if (parts.length !== 2) throw new InvalidArgumentError('expected two numbers: A,B');
  return [parts[0]!, parts[1]!];
}

/** Both files decoded at once on worker threads; a bad file is reported in one line naming it. */
async function loadSides(files: string[], opts: DiffCliOptions) {
  const bar = progressFor(files.join(' + '), await totalSize(files), !opts.json);
  const request = (file: string) => ({
    file,
    fullStacks: opts.fullStacks ?? false,
    ...(opts.device === undefined ? {} : { device: opts.device }),
  });
  try {
    const sides = await diffSidesInParallel(files.map(request), (bytes) => bar.update(bytes));
    bar.stop();
    sides.forEach((r, i) => {
      if ('error' in r) reportError(files[i]!, new Error(r.error));
    });
    return sides;
  } finally {
    bar.stop();
  }
}

function render(d: DeviceDiff): string {
  const title = d.label === d.label_b ? d.label : `${d.label} (A) vs ${d.label_b} (B)`;
  const lines = [pc.bold(title)];
  for (const e of d.explanation) lines.push(`  ${e}`);
  lines.push('', '  totals (B − A):');
  const rows = d.totals
    .filter((t) => t.a !== 0 || t.b !== 0)
    .map((t) => [fmt(t.a, t.unit), fmt(t.b, t.unit), signed(t.delta, t.unit), t.metric]);
  lines.push(indent(sitesTable(['A', 'B', 'B − A', 'figure'], rows)));
  lines.push(...renderMoment('live at dump time', d.at_dump));
  lines.push(...renderMoment("live at each file's allocated peak", d.at_peak));
  return lines.join('\n');
}

function renderMoment(title: string, m: MomentDiff): string[] {
  const head = `  ${title} (A after entry ${formatCount(m.a_after_entry)}, B after entry ${formatCount(m.b_after_entry)}): A ${formatBytes(m.a_bytes)}, B ${formatBytes(m.b_bytes)}, B − A ${signed(m.delta_bytes, 'bytes')}`;
  if (m.sites.length === 0) return ['', head, `    no site differs (${matchingLine(m)}).`];
  const rows = m.sites.map((s) => [
    formatBytes(s.a_bytes),
    formatBytes(s.b_bytes),
    signed(s.delta_bytes, 'bytes'),
    `${formatCount(s.a_count)} / ${formatCount(s.b_count)}`,
    MATCHING_WORDS[s.matched_by],
    s.b_frames
      ? `${framesCell(s.frames, 2)}\n${pc.dim('in B:')}\n${framesCell(s.b_frames, 2)}`
      : framesCell(s.frames),
  ]);
  const out = [
    '',
    head,
    `    sites matched: ${matchingLine(m)}`,
    indent(
      sitesTable(['A', 'B', 'B − A', 'count A / B', 'matched by', 'allocated at (innermost first)'], rows),
    ),
  ];
  if (m.other_sites > 0)
    out.push(
      `    … ${formatCount(m.other_sites)} more sites differ (net ${signed(m.other_delta_bytes, 'bytes')}; --top to list them)`,
    );
  return out;
}

const MATCHING_WORDS: Record<Matching, string> = {
  same_frames: 'same frames',
  innermost_user_frame: 'user frame',
  only_a: 'only in A',
  only_b: 'only in B',
};

function matchingLine(m: MomentDiff): string {
  const c = m.matching;
  const parts = [`${formatCount(c.same_frames)} by the same frames`];
  if (c.innermost_user_frame > 0)
    parts.push(
      `${formatCount(c.innermost_user_frame)} by the innermost user frame only (their stacks differ)`,
    );
  parts.push(`${formatCount(c.only_a)} only in A`, `${formatCount(c.only_b)} only in B`);
  return parts.join(', ');
}

function fmt(n: number, unit: 'bytes' | 'count'): string {
  return unit === 'bytes' ? formatBytes(n) : formatCount(n);
}

function signed(n: number, unit: 'bytes' | 'count'): string {
  return n > 0 ? `+${fmt(n, unit)}` : fmt(n, unit);
}
