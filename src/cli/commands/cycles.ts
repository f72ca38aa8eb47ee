import { existsSync } from 'node:fs';
import type { Command } from 'commander';
import type { CycleGraph } from '../../engine/analyses/cycles/index.js';
import {
  allocationText,
  burstText,
  type CycleReport,
  cycleReport,
  cycleTitle,
  heldText,
  recordedSiteText,
  tensorText,
  wallClockText,
  windowText,
} from '../../engine/analyses/cycles/index.js';
import { formatBytes, plural } from '../../engine/base/index.js';
import { gatherCycleInputs, readCycleFile, WindowFinder } from '../../node/cycles/cycle-inputs.js';
import { EXIT_BAD_INPUT, reportError } from '../../node/files/report-error.js';
import { pc } from '../text/colors.js';
import { textWidth } from '../text/indent.js';
import { fitToWidth, shortenMiddle } from '../text/text-width.js';

/** `memlens cycles`: the reference cycles `memlens record --cycles` wrote, with what they held. */
export function cyclesCommand(program: Command): void {
  program
    .command('cycles')
    .description(
      'reference cycles recorded by memlens record --cycles: the bytes each held, the path from the cycle to each tensor, and its allocation and GC burst in the snapshot of that window',
    )
    .argument(
      '<path...>',
      'run directories (their cycles/*.json), cycle files, and snapshot files to link them to',
    )
    .option('--json', 'print JSON: {"cycles": [{"file", "rank", "bytes", "path_words", "tensors": [...]}]}')
    .action((paths: string[], opts: { json?: boolean }) => listCycles(paths, opts.json ?? false));
}

async function listCycles(paths: string[], json: boolean): Promise<void> {
  let failed = false;
  const fail = (file: string, e: unknown): false => {
    failed = true;
    reportError(file, e);
    return false;
  };
  // A path that is not there is said once, as every command says it; the others are still read.
  const present = paths.filter((p) => existsSync(p) || fail(p, 'no such file'));
  const { cycles, run } = gatherCycleInputs(present);
  if (cycles.length === 0 && present.length > 0)
    throw new Error(
      `${present.join(', ')}: no cycle files (cycles/*.json, written by memlens record --cycles)`,
    );
  const graphs: { file: string; graph: CycleGraph }[] = [];
  const reports: Record<string, unknown>[] = [];
  for (const file of cycles) {
    try {
      graphs.push({ file, graph: readCycleFile(file) });
    } catch (e) {
      fail(file, e);
      reports.push({ file, error: (e as Error).message });
    }
  }
  // Rank then time: each window's cycles come together, so its snapshot is loaded once.
  graphs.sort((a, b) => a.graph.rank - b.graph.rank || a.graph.time_us - b.graph.time_us);
  const finder = new WindowFinder(run, fail);
  const width = textWidth();
  for (const { file, graph } of graphs) {
    const { match, gcOf } = await finder.match(graph);
    const report = cycleReport(graph, match, gcOf);
    if (json) reports.push({ file, ...report });
    else process.stdout.write(`${shortenMiddle(file, width)}\n${fitToWidth(render(report), width)}\n\n`);
  }
  if (json) process.stdout.write(`${JSON.stringify({ cycles: reports }, null, 1)}\n`);
  if (failed) process.exitCode = EXIT_BAD_INPUT;
}

function render(r: CycleReport): string {
  const lines = [
    `  ${pc.bold(cycleTitle(r))}, at ${wallClockText(r.time_us)}`,
    `  ${pc.bold(heldText(r))}`,
    `  ${r.path_words ?? 'no tensor in the graph'}`,
    `  ${windowText(r)}`,
  ];
  // Largest first; a graph of many tensors (a chain of graph nodes) shows its largest few.
  const tensors = [...r.tensors].sort((a, b) => b.bytes - a.bytes || a.id - b.id);
  for (const t of tensors.slice(0, TENSORS_SHOWN)) {
    lines.push(`    tensor #${t.id} ${tensorText(t)} at 0x${t.data_ptr.toString(16)}`);
    if (r.tensors.length > 1 && t.path_words !== r.path_words) lines.push(`      ${t.path_words}`);
    if (t.allocation !== null) lines.push(`      ${allocationText(t.allocation)}`);
    else if (r.snapshot !== null) lines.push(`      ${pc.dim(`no allocation: ${t.allocation_reason}`)}`);
    // The recorder's own stack names the site where the snapshot cannot.
    const recorded = t.allocation?.site ? null : recordedSiteText(t);
    if (recorded !== null) lines.push(`      ${recorded}`);
    if (t.burst !== null) lines.push(`      ${pc.yellow(burstText(t.burst))}`);
    else if (t.allocation !== null) lines.push(`      ${pc.dim(`no GC burst: ${t.burst_reason}`)}`);
  }
  const rest = tensors.slice(TENSORS_SHOWN);
  if (rest.length > 0)
    lines.push(
      `    … ${plural(rest.length, 'more tensor')} (${formatBytes(rest.reduce((n, t) => n + (t.counted ? t.bytes : 0), 0))}; --json lists every one)`,
    );
  return lines.join('\n');
}

/** Tensors listed per cycle, largest first. */
const TENSORS_SHOWN = 5;
