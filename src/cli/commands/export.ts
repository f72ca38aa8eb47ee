import { once } from 'node:events';
import { createWriteStream, renameSync, rmSync } from 'node:fs';
import { createGzip } from 'node:zlib';
import { type Command, InvalidArgumentError, Option } from 'commander';
import { formatCount, plural, SnapshotError } from '../../engine/base/index.js';
import {
  DEFAULT_COUNTER_POINTS,
  type PerfettoCounters,
  POINTS_PER_BUCKET,
  perfettoTrace,
} from '../../engine/export/index.js';
import { checkOutputApart } from '../../node/export/export-output.js';
import { exportTables, type TableFormat } from '../../node/export/export-tables.js';
import { removeIfInterrupted } from '../../node/files/interrupt-cleanup.js';
import { openSnapshot } from '../../node/files/open-snapshot.js';
import { EXIT_BAD_INPUT } from '../../node/files/report-error.js';
import { parseCount } from '../text/run-files.js';

type ExportFormat = TableFormat | 'perfetto';

interface ExportOptions {
  format: ExportFormat;
  output: string;
  force?: boolean;
  json?: boolean;
  maxCounterPoints: number;
  full?: boolean;
}

/** `memlens export`: the snapshot's tables for SQL engines (Parquet, CSV, JSON lines) or a Perfetto trace. */
export function exportCommand(program: Command): void {
  program
    .command('export')
    .description(
      'write snapshots or runs as tables (parquet, csv, jsonl: see docs/parquet-schema.md) or as a Perfetto/Chrome trace (perfetto)',
    )
    .argument('<paths...>', 'snapshot files or run directories (perfetto: one file)')
    .requiredOption(
      '-o, --output <path>',
      'output directory (tables) or trace file (perfetto: .json or .json.gz)',
    )
    .option('--format <fmt>', 'parquet, csv, jsonl or perfetto', parseFormat, 'parquet')
    .option('--force', 'replace a non-empty output directory')
    .option('--json', 'print what was written as JSON: {"output", "format", "snapshots": [...]}')
    .option(
      '--max-counter-points <n>',
      'perfetto: a total changing more often is drawn with n points: n/4 time buckets of first, min, max, last value',
      parseCounterPoints,
      DEFAULT_COUNTER_POINTS,
    )
    .addOption(
      new Option('--full', 'perfetto: every change of the totals (large: ~130 bytes a change)').conflicts(
        'maxCounterPoints',
      ),
    )
    .action(async (paths: string[], opts: ExportOptions, cmd: Command) => {
      try {
        const perfettoOnly = opts.full || cmd.getOptionValueSource('maxCounterPoints') === 'cli';
        if (opts.format !== 'perfetto' && perfettoOnly) {
          throw new SnapshotError('--full and --max-counter-points apply to --format perfetto only');
        }
        if (opts.format === 'perfetto') {
          const max = opts.full ? Number.POSITIVE_INFINITY : opts.maxCounterPoints;
          const counters = await exportPerfetto(paths, opts.output, max);
          const note = downsampledNote(counters, max);
          if (note) process.stderr.write(`memlens: ${note}\n`);
          if (opts.json) writeJsonLine({ output: opts.output, format: opts.format, snapshots: paths });
        } else {
          const m = await exportTables(paths, opts.output, opts.format, {
            force: opts.force === true,
            progress: true,
          });
          if (opts.json) writeJsonLine({ output: opts.output, format: opts.format, snapshots: m.snapshots });
          else
            process.stderr.write(
              `memlens: ${plural(m.snapshots.length, 'snapshot')} exported to ${opts.output}\n`,
            );
        }
      } catch (e) {
        process.stderr.write(`memlens: ${(e instanceof Error ? e.message : String(e)).split('\n')[0]}\n`);
        process.exitCode = EXIT_BAD_INPUT;
      }
    });
}

function writeJsonLine(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value)}\n`);
}

/** The line that says a trace's counters were downsampled, and how to get them all; none if not. */
function downsampledNote(counters: PerfettoCounters[], max: number): string | undefined {
  const cut = counters.filter((c) => c.buckets > 0);
  if (cut.length === 0) return undefined;
  const most = Math.max(...cut.map((c) => c.changes));
  const names = [...new Set(cut.map((c) => c.name))].join(', ');
  return (
    `counter tracks ${names} downsampled from up to ${formatCount(most)} changes to at most ` +
    `${formatCount(max)} points (${formatCount(cut[0]!.buckets)} time buckets, each keeping its first, ` +
    'lowest, highest and last value); --full keeps every change'
  );
}

async function exportPerfetto(
  paths: string[],
  output: string,
  maxCounterPoints: number,
): Promise<PerfettoCounters[]> {
  if (paths.length !== 1) throw new SnapshotError('--format perfetto takes one snapshot file');
  const file = paths[0]!;
  checkOutputApart(output, [file]);
  const snapshot = await openSnapshot(file, { progress: true }).catch((e: unknown) => {
    throw new SnapshotError(`${file}: ${(e as Error).message}`);
  });
  const tmp = `${output}.memlens-${process.pid}.tmp`;
  const release = removeIfInterrupted(tmp);
  try {
    const out = createWriteStream(tmp);
    const gzip = output.endsWith('.gz') ? createGzip() : undefined;
    if (gzip) gzip.pipe(out);
    const sink = gzip ?? out;
    const closed = once(out, 'close');
    const trace = perfettoTrace(snapshot, file, { maxCounterPoints });
    let piece = trace.next();
    for (; !piece.done; piece = trace.next()) {
      if (!sink.write(piece.value)) await once(sink, 'drain');
    }
    sink.end();
    await closed;
    renameSync(tmp, output);
    return piece.value;
  } catch (e) {
    rmSync(tmp, { force: true });
    if (e instanceof SnapshotError) throw e;
    throw new SnapshotError(
      `cannot write ${output} (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`,
    );
  } finally {
    release();
  }
}

function parseCounterPoints(v: string): number {
  const n = parseCount(v);
  if (n < POINTS_PER_BUCKET) throw new InvalidArgumentError(`expected at least ${POINTS_PER_BUCKET} points`);
  return n;
}

function parseFormat(v: string): ExportFormat {
  if (v !== 'parquet' && v !== 'csv' && v !== 'jsonl' && v !== 'perfetto') {
    throw new InvalidArgumentError('expected parquet, csv, jsonl or perfetto');
  }
  return v;
}
