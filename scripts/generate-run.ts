/**
 * Writes a synthetic training run: one snapshot per rank per step window, as verl, torchtitan or
 * composer lay them out (lmms-engine and Megatron-Bridge: one per rank, at the stop step), with
 * known differences planted on chosen ranks.
 *
 *   node dist-tools/scripts/generate-run.js --out run/ --ranks 8 --windows 10 \
 *     --extra-buffer 3:512MiB@4 --growth 5:16MiB --oom 2:exhaustion --expected run.json
 *
 * Each file appears under its name only once complete (written to a temporary name, renamed).
 */
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { Command, InvalidArgumentError, Option } from 'commander';
import { parseByteText, parseCountText } from '../src/engine/base/index.js';
import { OOM_CAUSES, type OomCause } from './synth/oom-plant.js';
import { generateRun, RUN_LAYOUTS, type RunLayout, type RunOptions } from './synth/run.js';

interface CliOptions {
  out: string;
  ranks: number;
  windows: number;
  stepsPerWindow: number;
  layout: RunLayout;
  seed: number;
  extraBuffer?: RunOptions['extraBuffer'];
  growth?: RunOptions['growth'];
  oom?: RunOptions['oom'];
  expected?: string;
  quiet?: boolean;
}

function count(v: string): number {
  const n = parseCountText(v);
  if (n === null) throw new InvalidArgumentError('expected a whole number');
  return n;
}

function bytes(v: string): number {
  const n = parseByteText(v);
  if (n === null) throw new InvalidArgumentError('expected a size such as 64MiB');
  return n;
}

/** RANK:SIZE@STEP */
function extraBuffer(v: string): RunOptions['extraBuffer'] {
  const m = /^(\d+):([^@]+)@(\d+)$/.exec(v);
  if (m === null) throw new InvalidArgumentError('expected RANK:SIZE@STEP, e.g. 3:512MiB@4');
  return { rank: count(m[1]!), bytes: bytes(m[2]!), step: count(m[3]!) };
}

/** RANK:SIZE */
function growth(v: string): RunOptions['growth'] {
  const m = /^(\d+):(.+)$/.exec(v);
  if (m === null) throw new InvalidArgumentError('expected RANK:SIZE, e.g. 5:16MiB');
  return { rank: count(m[1]!), bytes: bytes(m[2]!) };
}

/** RANK:CAUSE */
function oom(v: string): RunOptions['oom'] {
  const m = /^(\d+):(.+)$/.exec(v);
  if (m === null || !OOM_CAUSES.includes(m[2] as OomCause))
    throw new InvalidArgumentError(`expected RANK:CAUSE with CAUSE one of ${OOM_CAUSES.join(', ')}`);
  return { rank: count(m[1]!), cause: m[2] as OomCause };
}

function program(): Command {
  return new Command('generate-run')
    .description('Write a synthetic training run (ranks x step windows) with known planted differences.')
    .requiredOption('--out <dir>', 'directory to write the run into (created)')
    .option('--ranks <n>', 'ranks (one device each)', count, 2)
    .option('--windows <n>', 'step windows per rank', count, 4)
    .option('--steps-per-window <n>', "steps per window (verl's steps<A>-<B>/ when more than 1)", count, 1)
    .addOption(new Option('--layout <name>', 'directory layout').choices([...RUN_LAYOUTS]).default('verl'))
    .option('--seed <n>', 'random seed', count, 1)
    .option(
      '--extra-buffer <rank:size@step>',
      'one rank allocates and keeps a buffer from a step on',
      extraBuffer,
    )
    .option('--growth <rank:size>', 'one rank keeps a tensor of this size every step', growth)
    .option('--oom <rank:cause>', 'one rank dies of an OOM of this cause after the last window', oom)
    .option('--expected <file>', 'also write what was planted and each file, as JSON')
    .option('--quiet', 'no summary on stderr');
}

export function main(argv: string[]): void {
  const o = program().parse(argv).opts<CliOptions>();
  const options: RunOptions = {
    ranks: o.ranks,
    windows: o.windows,
    stepsPerWindow: o.stepsPerWindow,
    layout: o.layout,
    seed: o.seed,
    extraBuffer: o.extraBuffer,
    growth: o.growth,
    oom: o.oom,
  };
  const files = generateRun(options);
  for (const f of files) {
    const target = path.join(o.out, ...f.path.split('/'));
    fs.mkdirSync(path.dirname(target), { recursive: true });
    const tmp = `${target}.tmp-${process.pid}`;
    fs.writeFileSync(tmp, f.bytes);
    fs.renameSync(tmp, target);
  }
  if (o.expected) {
    const listed = files.map(({ bytes: b, ...rest }) => ({ ...rest, size: b.length }));
    fs.writeFileSync(o.expected, `${JSON.stringify({ options, files: listed }, null, 1)}\n`);
  }
  if (!o.quiet) {
    const total = files.reduce((n, f) => n + f.bytes.length, 0);
    process.stderr.write(`${o.out}: ${files.length} files, ${(total / 1e6).toFixed(1)} MB\n`);
  }
}

const invoked =
  process.argv[1] !== undefined && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href;
if (invoked) {
  try {
    main(process.argv);
  } catch (err) {
    process.stderr.write(`generate-run: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exitCode = 1;
  }
}
