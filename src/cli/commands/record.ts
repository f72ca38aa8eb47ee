import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { type Command, InvalidArgumentError, Option } from 'commander';
import type { Budgets } from '../../engine/analyses/check/index.js';
import { EXIT_BAD_INPUT } from '../../node/files/report-error.js';
import { baselineBeforeRecording, checkRecording } from '../record/record-check.js';
import { runChild } from '../record/record-child.js';
import { buildManifest, readProcRecords, writeManifest } from '../record/record-manifest.js';
import { reportRecording } from '../record/record-report.js';
import { parseBytes, parseCount } from '../text/run-files.js';
import { budgetsOf, type RuleCliOptions, ruleOptions, rulesGiven } from './check.js';

/** The Python helper shipped in the package (python/sitecustomize.py, python/memlens/). */
const HELPER_DIR = fileURLToPath(new URL('../../../python/', import.meta.url));

interface RecordCliOptions extends RuleCliOptions {
  out?: string;
  every: number;
  maxEntries: number;
  stacks: 'python' | 'all';
  maxBytes: number;
  cycles?: boolean;
  cyclesDevice: string;
  cyclesMaxGraphs: number;
  cyclesMaxNodes: number;
  grace: number;
  json?: boolean;
  check?: boolean;
}

const USAGE = 'memlens record [options] -- CMD ARGS...';

/** `memlens record`: run a command with the memory recorder in every Python process it starts. */
export function recordCommand(program: Command): void {
  const cmd = program
    .command('record')
    .description(
      'run a PyTorch program and record its CUDA memory: a snapshot every K optimizer steps, on OOM and at exit, per rank',
    )
    .usage('[options] -- CMD ARGS...')
    .argument('[command...]', 'the command to run (after --)')
    .option('--out <dir>', 'where to write the run (default: a new ./memlens-run-<time> directory)')
    .option(
      '--every <k>',
      'cut a window every k optimizer steps (0: only on dump, SIGUSR1, OOM, exit)',
      parseCount,
      1,
    )
    .option(
      '--max-entries <n>',
      'trace entries kept per window (the history ring buffer)',
      parsePositive,
      100_000,
    )
    .addOption(
      new Option('--stacks <which>', 'stacks recorded with each allocation')
        .choices(['python', 'all'])
        .default('python'),
    )
    .addOption(
      new Option('--max-bytes <size>', 'drop the oldest step windows beyond this size (0: no bound)')
        .argParser(parseBytes)
        .default(10 * 2 ** 30, '10GiB'),
    )
    .option('--cycles', 'also write the reference cycles that held tensors, after each garbage collection')
    .option('--cycles-device <dev>', 'the device whose tensors a cycle must hold (cuda, cpu)', 'cuda')
    .option('--cycles-max-graphs <n>', 'cycle graphs written per process at most', parsePositive, 100)
    .option('--cycles-max-nodes <n>', 'objects per cycle graph at most', parsePositive, 1000)
    .option(
      '--grace <s>',
      'seconds the command has to end after memlens gets SIGTERM or SIGHUP before its processes are killed',
      parseCount,
      10,
    )
    .option(
      '--json',
      "print run.json's manifest as one line on stdout when the command has ended (after its own output), instead of the summary",
    )
    .option(
      '--check',
      'then hold the recording to memlens check rules: the options below over pyproject.toml [tool.memlens.check]; exit 1 when one breaks',
    );
  // The same rule options as `memlens check`, defined once there.
  ruleOptions(cmd).action(async (command: string[], opts: RecordCliOptions) => {
    if (command.length === 0) {
      process.stderr.write(`memlens record: no command to run: ${USAGE}\n`);
      process.exitCode = EXIT_BAD_INPUT;
      return;
    }
    // Bad budgets are said before a long program runs, not after.
    const budgets = opts.check ? checkBudgets(opts) : null;
    if (opts.check && budgets === null) return;
    const unused = opts.check ? [] : rulesGiven(cmd);
    if (unused.length > 0) {
      refuse(
        `${unused.join(', ')}: ${unused.length > 1 ? 'rule options apply' : 'a rule option applies'} only with --check`,
      );
      return;
    }
    const baseline = budgets === null ? null : await baselineBeforeRecording(budgets);
    if (baseline === undefined) return;
    const out = outputDirectory(opts.out);
    if (out === null) return;
    const code = await record(command, out, opts);
    process.exitCode = budgets !== null && code === 0 ? await checkRecording(out, budgets, baseline) : code;
  });
}

function checkBudgets(opts: RecordCliOptions): Budgets | null {
  try {
    return budgetsOf(opts);
  } catch (e) {
    return refuse(`--check: ${(e as Error).message}`);
  }
}

async function record(command: string[], out: string, opts: RecordCliOptions): Promise<number> {
  process.stderr.write(`memlens record: recording into ${out}\n`);
  const started = new Date();
  const end = await runChild(
    command,
    { ...process.env, ...helperEnv(out, opts) },
    { graceSeconds: opts.grace },
  );
  const ended = new Date();
  const procs = readProcRecords(out);
  const manifest = buildManifest(
    { command, out, started, ended, exitCode: end.code, signal: end.signal, options: optionsOf(opts) },
    procs,
  );
  // Whatever fails from here on is said, and the exit code stays the command's.
  try {
    writeManifest(out, manifest);
    if (opts.json) process.stdout.write(`${JSON.stringify(manifest)}\n`);
    await reportRecording(manifest, procs, { cycles: opts.cycles === true, summary: !opts.json });
  } catch (e) {
    process.stderr.write(`memlens record: ${e instanceof Error ? e.message.split('\n')[0] : String(e)}\n`);
  }
  return end.code;
}

/** The helper reads its options from the environment every process of the run inherits. */
function helperEnv(out: string, opts: RecordCliOptions): Record<string, string> {
  const pythonPath = [HELPER_DIR.replace(/[\\/]$/, ''), process.env.PYTHONPATH]
    .filter((p) => p !== undefined && p !== '')
    .join(path.delimiter);
  return {
    PYTHONPATH: pythonPath,
    MEMLENS_RECORD_OUT: out,
    MEMLENS_RECORD_EVERY: String(opts.every),
    MEMLENS_RECORD_MAX_ENTRIES: String(opts.maxEntries),
    MEMLENS_RECORD_STACKS: opts.stacks,
    MEMLENS_RECORD_MAX_BYTES: String(opts.maxBytes),
    MEMLENS_RECORD_CYCLES: opts.cycles ? '1' : '0',
    MEMLENS_RECORD_CYCLES_DEVICE: opts.cyclesDevice,
    MEMLENS_RECORD_CYCLES_MAX_GRAPHS: String(opts.cyclesMaxGraphs),
    MEMLENS_RECORD_CYCLES_MAX_NODES: String(opts.cyclesMaxNodes),
  };
}

function optionsOf(opts: RecordCliOptions): Record<string, unknown> {
  return {
    every: opts.every,
    max_entries: opts.maxEntries,
    stacks: opts.stacks,
    max_bytes: opts.maxBytes,
    cycles: opts.cycles === true,
    cycles_device: opts.cyclesDevice,
    cycles_max_graphs: opts.cyclesMaxGraphs,
    cycles_max_nodes: opts.cyclesMaxNodes,
  };
}

/**
 * The absolute output directory, created empty: a run never mixes with an earlier one's files.
 * Null (said in one line) when it cannot be used.
 */
function outputDirectory(given: string | undefined): string | null {
  const out = path.resolve(given ?? `memlens-run-${stamp(new Date())}`);
  try {
    if (fs.existsSync(out)) {
      if (!fs.statSync(out).isDirectory()) return refuse(`${out}: not a directory`);
      if (fs.readdirSync(out).length > 0)
        return refuse(`${out}: not empty; record each run into a new directory`);
    }
    fs.mkdirSync(out, { recursive: true });
    return out;
  } catch (e) {
    return refuse(`${out}: cannot create (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`);
  }
}

function refuse(message: string): null {
  process.stderr.write(`memlens record: ${message}\n`);
  process.exitCode = EXIT_BAD_INPUT;
  return null;
}

/** 20261126-014502: sorts by time, safe in any file system. */
function stamp(d: Date): string {
  const two = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}${two(d.getMonth() + 1)}${two(d.getDate())}-${two(d.getHours())}${two(d.getMinutes())}${two(d.getSeconds())}`;
}

function parsePositive(v: string): number {
  const n = parseCount(v);
  if (n === 0) throw new InvalidArgumentError('expected a positive integer');
  return n;
}
