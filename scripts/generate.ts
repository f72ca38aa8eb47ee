/**
 * Writes a synthetic PyTorch memory snapshot of any size, with its expected figures.
 *
 *   node dist-tools/scripts/generate.js --out big.pickle --size 1GB --seed 3 --expected big.json
 *
 * The file appears under its name only once complete (written to a temporary name, renamed).
 */
import fs from 'node:fs';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { pathToFileURL } from 'node:url';
import zlib from 'node:zlib';
import { Command, InvalidArgumentError, Option } from 'commander';
import { type WriteOptions, type WriteResult, writeSnapshot } from './synth/index.js';
import { OOM_CAUSES, type OomCause } from './synth/oom-plant.js';

interface CliOptions {
  out: string;
  size?: number;
  events?: number;
  scenario: 'training';
  seed: number;
  devices: number;
  streams: number;
  oom?: boolean;
  expandable?: boolean;
  overflow?: boolean;
  pendingFrees?: boolean;
  privatePool?: boolean;
  legacy?: 'list' | 'v2.0';
  timeUs: boolean;
  shareStacks?: boolean;
  protocol: 2 | 3 | 4 | 5;
  json?: boolean;
  gzip?: boolean;
  expected?: string;
  quiet?: boolean;
  leak?: number;
  cycles?: number[];
  gcEvery?: number;
  oomCause?: OomCause;
  extraBuffer?: number;
}

const UNITS: Record<string, number> = {
  '': 1,
  b: 1,
  k: 1e3,
  kb: 1e3,
  m: 1e6,
  mb: 1e6,
  g: 1e9,
  gb: 1e9,
  kib: 2 ** 10,
  mib: 2 ** 20,
  gib: 2 ** 30,
};

function parseSize(text: string): number {
  const m = /^\s*(\d+(?:\.\d+)?)\s*([a-z]*)\s*$/i.exec(text);
  const unit = m ? UNITS[m[2]!.toLowerCase()] : undefined;
  if (!m || unit === undefined) throw new InvalidArgumentError('expected a size such as 100MB, 1GB, 1.5GiB');
  return Math.round(Number(m[1]) * unit);
}

function parseInteger(text: string): number {
  const n = Number(text);
  if (!Number.isInteger(n) || n < 0) throw new InvalidArgumentError('expected a non-negative integer');
  return n;
}

function program(): Command {
  return new Command('generate')
    .description('Write a synthetic PyTorch CUDA memory snapshot (pickle or JSON) with known figures.')
    .requiredOption('--out <file>', 'output file')
    .option('--size <size>', 'approximate file size (100MB, 1GB, ...)', parseSize)
    .option('--events <n>', 'trace entries per device (instead of --size)', parseInteger)
    .addOption(new Option('--scenario <name>', 'workload').choices(['training']).default('training'))
    .option('--seed <n>', 'random seed', parseInteger, 1)
    .option('--devices <n>', 'number of devices', parseInteger, 1)
    .option('--streams <n>', 'extra CUDA streams', parseInteger, 0)
    .option('--oom', 'end with an out-of-memory event')
    .option('--expandable', 'expandable segments (segment_map / segment_unmap)')
    .option('--overflow', 'history ring buffer overflowed: the trace lost its beginning')
    .option('--pending-frees', 'leave blocks in active_pending_free')
    .option('--private-pool', 'allocate part of the work in a private (CUDA graph) pool')
    .addOption(new Option('--legacy <format>', 'older layouts').choices(['list', 'v2.0']))
    .option('--no-time-us', 'trace entries without time_us')
    .option('--share-stacks', 'one frames list per distinct stack (smaller files)')
    .addOption(
      new Option('--protocol <n>', 'pickle protocol')
        .choices(['2', '3', '4', '5'])
        .default(4)
        .argParser(Number),
    )
    .option('--json', 'write JSON instead of a pickle')
    .option('--gzip', 'gzip the output')
    .option('--expected <file>', 'also write the expected figures as JSON')
    .option('--quiet', 'no progress on stderr')
    .option('--leak <size>', 'plant a leak: every step keeps a tensor of this size', parseSize)
    .option(
      '--cycles <sizes>',
      'plant reference cycles: tensors of these sizes (comma-separated) every step',
      (v: string) => v.split(',').map(parseSize),
    )
    .option('--gc-every <n>', 'with --cycles: gc.collect() every n steps (default 4)', parseInteger)
    .addOption(
      new Option('--oom-cause <cause>', 'end with an OOM of a known cause (figures in --expected)').choices(
        OOM_CAUSES,
      ),
    )
    .option(
      '--extra-buffer <size>',
      'allocate a buffer of this size at start-up from allocate_rank_buffer (a rank that differs)',
      parseSize,
    );
}

function toWriteOptions(o: CliOptions): WriteOptions {
  return {
    seed: o.seed,
    events: o.events,
    targetBytes: o.events === undefined ? (o.size ?? 100e6) : undefined,
    scenario: o.scenario,
    devices: o.devices,
    streams: o.streams,
    oom: o.oom ?? false,
    expandableSegments: o.expandable ?? false,
    ringBufferOverflow: o.overflow ?? false,
    pendingFrees: o.pendingFrees ?? false,
    privatePool: o.privatePool ?? false,
    legacy: o.legacy,
    noTimeUs: !o.timeUs,
    shareIdenticalStacks: o.shareStacks ?? false,
    protocol: o.protocol,
    format: o.json ? 'json' : 'pickle',
    leakBytes: o.leak,
    cycleBytes: o.cycles,
    gcEvery: o.gcEvery,
    oomCause: o.oomCause,
    extraBuffer: o.extraBuffer,
  };
}

/** Streams the snapshot into `file` with synchronous writes (the generator is synchronous). */
function writeRaw(file: string, options: WriteOptions, quiet: boolean): WriteResult {
  const progress = !quiet && process.stderr.isTTY;
  const fd = fs.openSync(file, 'w');
  let written = 0;
  let nextReport = 0;
  try {
    return writeSnapshot(options, (chunk) => {
      let off = 0;
      while (off < chunk.length) off += fs.writeSync(fd, chunk, off);
      written += chunk.length;
      if (progress && written >= nextReport) {
        process.stderr.write(`\r${(written / 1e6).toFixed(0)} MB`);
        nextReport = written + 50e6;
      }
    });
  } finally {
    fs.closeSync(fd);
    if (progress) process.stderr.write('\r\x1b[K');
  }
}

async function gzipFile(from: string, to: string): Promise<void> {
  await pipeline(fs.createReadStream(from), zlib.createGzip({ level: 6 }), fs.createWriteStream(to));
}

export async function main(argv: string[]): Promise<void> {
  const o = program().parse(argv).opts<CliOptions>();
  const out = path.resolve(o.out);
  const tmp = `${out}.tmp-${process.pid}`;
  const raw = o.gzip ? `${tmp}.raw` : tmp;
  const started = performance.now();
  try {
    const result = writeRaw(raw, toWriteOptions(o), o.quiet ?? false);
    if (o.gzip) {
      await gzipFile(raw, tmp);
      fs.unlinkSync(raw);
    }
    fs.renameSync(tmp, out);
    if (o.expected) {
      const figures = `${JSON.stringify({ ...result.expected, file: path.basename(out) }, null, 1)}\n`;
      fs.writeFileSync(o.expected, figures);
    }
    if (!o.quiet) report(out, result, (performance.now() - started) / 1000);
  } catch (err) {
    for (const f of [raw, tmp]) fs.rmSync(f, { force: true });
    throw err;
  }
}

function report(out: string, r: WriteResult, seconds: number): void {
  const entries = r.expected.devices.reduce((n, d) => n + d.trace_entries, 0);
  const perEntry = entries > 0 ? ` (${(r.bytesWritten / entries).toFixed(0)} B/entry)` : '';
  const onDisk = fs.statSync(out).size;
  const gz = onDisk !== r.bytesWritten ? ` (${(onDisk / 1e6).toFixed(1)} MB on disk)` : '';
  process.stderr.write(
    `${out}: ${(r.bytesWritten / 1e6).toFixed(1)} MB${gz}, ${entries} trace entries${perEntry}, ` +
      `${seconds.toFixed(1)} s, max RSS ${(process.resourceUsage().maxRSS / 1024).toFixed(0)} MB\n`,
  );
}

const invoked =
  process.argv[1] !== undefined && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href;
if (invoked) {
  main(process.argv).catch((err: unknown) => {
    process.stderr.write(`generate: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exitCode = 1;
  });
}
