import path from 'node:path';
import type { Command, Option } from 'commander';
import {
  type Baseline,
  BudgetError,
  type Budgets,
  baselineOf,
  type CheckResult,
  checkAnnotations,
  checkJunit,
  checkMarkdown,
  checkSubject,
  checkText,
  measure,
  parseBudgets,
} from '../../engine/analyses/check/index.js';
import { writeFileAtomically } from '../../node/files/write-file.js';
import { loadBaseline, loadSubject, readConfig, type SubjectOptions } from '../check/check-inputs.js';
import { commandLines } from '../text/command-lines.js';
import { textWidth } from '../text/indent.js';
import { parseCount } from '../text/run-files.js';

/** Exit code of a check whose rules do not all hold (bad input is EXIT_BAD_INPUT). */
export const EXIT_CHECK_FAILED = 1;

const FORMATS = ['text', 'json', 'junit', 'markdown'] as const;
export type Format = (typeof FORMATS)[number];

/** What `ruleOptions` adds, as commander names it. */
export interface RuleCliOptions {
  maxPeakAllocated?: string;
  maxPeakReserved?: string;
  maxFragmentation?: string;
  oom: boolean;
  leak: boolean;
  maxGrowthPerStep?: string;
  baseline?: string;
  tolerance?: string;
  config?: string | false;
}

interface CheckCliOptions extends RuleCliOptions {
  saveBaseline?: string;
  format: string;
  json?: boolean;
  jobs?: number;
  cache: boolean;
}

/** `memlens check`: budgets and a baseline for CI; exit 1 names the code that grew. */
export function checkCommand(program: Command): void {
  const command = program
    .command('check')
    .description(
      'hold a snapshot or run to memory budgets or a baseline (for CI): exit 1 names the sites that grew',
    )
    .argument('<path>', 'a snapshot file, or a run directory');
  ruleOptions(command)
    .option(
      '--save-baseline <file.json>',
      'write the figures and top sites at the peak as a baseline to commit',
    )
    .option('--format <format>', `output: ${FORMATS.join(', ')}`, 'text')
    .option('--json', 'print JSON (--format json): {"subject", "kind", "passed", "rules": [...]}')
    .option('--jobs <n>', 'a run: decode at most n files at once', parseCount)
    .option('--no-cache', 'a run: neither read nor write the result cache')
    .action(async (target: string, opts: CheckCliOptions) => {
      const format = opts.json ? 'json' : formatOf(opts.format);
      const load: SubjectOptions = { cache: opts.cache, jobs: opts.jobs, progress: false };
      const result = await runCheck(target, budgetsOf(opts), load, { saveBaseline: opts.saveBaseline });
      print(result, format, process.stdout);
      if (!result.passed) process.exitCode = EXIT_CHECK_FAILED;
    });
}

/**
 * The rules and where they come from, as `check` and `record --check` both take them: budgets, a
 * baseline and its tolerance, the config file (its table under the options given).
 */
export function ruleOptions(command: Command): Command {
  const before = new Set(command.options);
  command
    .option('--max-peak-allocated <size>', 'the allocated peak may not pass this (20GiB)')
    .option('--max-peak-reserved <size>', 'the reserved peak may not pass this')
    .option(
      '--max-fragmentation <size|pct>',
      'reserved above allocated at the peak: bytes, or a share of the reserved peak (10%)',
    )
    .option('--no-oom', 'fail on any out-of-memory event or OOM dump')
    .option('--no-leak', 'fail on any site that leaks across iterations (a run: grows window after window)')
    .option('--max-growth-per-step <size>', 'memory may grow at most this much per step or iteration')
    .option('--baseline <path>', 'also hold every figure to this snapshot, run or saved baseline (.json)')
    .option(
      '--tolerance <size|pct>',
      'how far a byte figure may exceed the baseline (5% or 256MiB; default 0)',
    )
    .option('--config <pyproject.toml>', 'read budgets from this file (default: the nearest pyproject.toml)')
    .option('--no-config', 'ignore pyproject.toml');
  ruleFlags.set(
    command,
    command.options.filter((o) => !before.has(o)),
  );
  return command;
}

const ruleFlags = new WeakMap<Command, Option[]>();

/** The rule options given on the command line ("--no-oom"), for a command that takes them only sometimes. */
export function rulesGiven(command: Command): string[] {
  const given = (o: Option) => {
    const key = o.attributeName();
    // --config and --no-config set one value: the one given is the one whose value it holds.
    const value = command.getOptionValue(key);
    return command.getOptionValueSource(key) === 'cli' && (o.negate ? value === false : value !== false);
  };
  return (ruleFlags.get(command) ?? []).filter(given).map((o) => o.long!);
}

/** Checks `target` (also for `memlens record --check`); the budgets' own baseline unless one is given. */
export async function runCheck(
  target: string,
  budgets: Budgets,
  load: SubjectOptions,
  opts: { saveBaseline?: string; baseline?: Baseline | null } = {},
): Promise<CheckResult> {
  const baselinePath = budgets.baseline;
  const baseline =
    opts.baseline !== undefined
      ? opts.baseline
      : baselinePath === undefined
        ? null
        : await loadBaseline(baselinePath, load);
  const loaded = await loadSubject(target, load);
  const { subject } = loaded;
  const figures = measure(subject);
  if (opts.saveBaseline !== undefined)
    writeFileAtomically(opts.saveBaseline, `${JSON.stringify(baselineOf(subject, figures), null, 1)}\n`);
  const result = checkSubject(subject, figures, budgets, baseline);
  // Explaining the fragmentation figure needs a model again (a run's file decoded anew): only for a failure.
  if (!result.rules.some((r) => r.figure === 'fragmentation' && r.passed === false)) return result;
  await loaded.explainFragmentation();
  return checkSubject(subject, measure(subject), budgets, baseline);
}

function formatOf(f: string): Format {
  if (!(FORMATS as readonly string[]).includes(f))
    throw new Error(`--format: expected one of ${FORMATS.join(', ')}, got "${f}"`);
  return f as Format;
}

/** The config's budgets, then the options over them; a bad value is a one-line error (exit 2). */
export function budgetsOf(opts: Partial<RuleCliOptions>): Budgets {
  const config = opts.config === false ? null : readConfig(opts.config);
  const given: Record<string, unknown> = {
    'max-peak-allocated': opts.maxPeakAllocated,
    'max-peak-reserved': opts.maxPeakReserved,
    'max-fragmentation': opts.maxFragmentation,
    'no-oom': opts.oom === false ? true : undefined,
    'no-leak': opts.leak === false ? true : undefined,
    'max-growth-per-step': opts.maxGrowthPerStep,
    tolerance: opts.tolerance,
    baseline: opts.baseline,
  };
  const flags = Object.fromEntries(Object.entries(given).filter(([, v]) => v !== undefined));
  const fromConfig = config === null ? {} : parsed(config.table, 'pyproject.toml [tool.memlens.check]');
  if (fromConfig.baseline !== undefined && config !== null)
    fromConfig.baseline = path.resolve(config.dir, fromConfig.baseline);
  return { ...fromConfig, ...parsed(flags, 'check') };
}

function parsed(table: Record<string, unknown>, where: string): Budgets {
  try {
    return parseBudgets(table);
  } catch (e) {
    if (e instanceof BudgetError) throw new Error(`${where}: ${where === 'check' ? '--' : ''}${e.message}`);
    throw e;
  }
}

/** The report in `format` on `out`; GitHub annotations beside it when running there. */
export function print(result: CheckResult, format: Format, out: NodeJS.WritableStream): void {
  const annotations =
    process.env.GITHUB_ACTIONS === 'true' ? checkAnnotations(result, process.env.GITHUB_WORKSPACE) : [];
  // Workflow commands work on either stream; stdout keeps JSON and XML documents clean.
  const stream = format === 'text' ? out : process.stderr;
  for (const a of annotations) stream.write(`${a}\n`);
  const render: Record<Format, () => string> = {
    text: () => checkText(result, (command, indent) => commandLines(command, textWidth(), indent, 'see: ')),
    json: () => JSON.stringify(result, null, 1),
    junit: () => checkJunit([result]),
    markdown: () => checkMarkdown(result),
  };
  out.write(`${render[format]()}\n`);
}
