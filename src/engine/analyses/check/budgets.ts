/**
 * The budgets `memlens check` holds a snapshot or run to, read from option text or a config
 * table (TOML values: strings with units, plain numbers of bytes, booleans), one error per bad
 * value naming the key.
 */
import { parseByteText } from '../../base/units.js';

/** A byte amount, or a share: of the reserved peak (fragmentation) or of the baseline (tolerance). */
export type Amount = { bytes: number } | { percent: number };

export interface Budgets {
  max_peak_allocated?: number;
  max_peak_reserved?: number;
  max_fragmentation?: Amount;
  no_oom?: boolean;
  no_leak?: boolean;
  max_growth_per_step?: number;
  /** How far a figure may exceed the baseline's (default 0). */
  tolerance?: Amount;
  /** A baseline path (config only: relative to the config file's directory). */
  baseline?: string;
}

export class BudgetError extends Error {}

type Kind = 'bytes' | 'amount' | 'flag' | 'path';

/** Every key, as the option and the config spell it (kebab-case), and what it holds. */
export const BUDGET_KEYS: Record<string, [keyof Budgets, Kind]> = {
  'max-peak-allocated': ['max_peak_allocated', 'bytes'],
  'max-peak-reserved': ['max_peak_reserved', 'bytes'],
  'max-fragmentation': ['max_fragmentation', 'amount'],
  'no-oom': ['no_oom', 'flag'],
  'no-leak': ['no_leak', 'flag'],
  'max-growth-per-step': ['max_growth_per_step', 'bytes'],
  tolerance: ['tolerance', 'amount'],
  baseline: ['baseline', 'path'],
};

/** A table of budgets (a config file's, or the options given); unknown keys are errors, not ignored. */
export function parseBudgets(table: Record<string, unknown>): Budgets {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(table)) {
    const spec = BUDGET_KEYS[key];
    if (spec === undefined)
      throw new BudgetError(`unknown key ${key} (known: ${Object.keys(BUDGET_KEYS).join(', ')})`);
    out[spec[0]] = parseValue(key, spec[1], value);
  }
  return out as Budgets;
}

function parseValue(key: string, kind: Kind, value: unknown): unknown {
  if (kind === 'flag') {
    if (typeof value !== 'boolean')
      throw new BudgetError(`${key}: expected true or false, got ${show(value)}`);
    return value;
  }
  if (kind === 'path') {
    if (typeof value !== 'string' || value === '')
      throw new BudgetError(`${key}: expected a path, got ${show(value)}`);
    return value;
  }
  const parsed = kind === 'bytes' ? bytesOf(value) : amountOf(value);
  if (parsed === null)
    throw new BudgetError(
      `${key}: expected ${kind === 'bytes' ? 'a size' : 'a size or a percentage'} (${kind === 'bytes' ? '20GiB, 512MiB, 4096' : '512MiB, 5%'}), got ${show(value)}`,
    );
  return parsed;
}

function bytesOf(value: unknown): number | null {
  if (typeof value === 'number') return Number.isSafeInteger(value) && value >= 0 ? value : null;
  if (typeof value === 'bigint') return bytesOf(Number(value));
  return typeof value === 'string' ? parseByteText(value) : null;
}

/** "5%" (a share, 0 to 100 and beyond) or a size. */
export function amountOf(value: unknown): Amount | null {
  if (typeof value === 'string') {
    const m = /^\s*(\d+(?:\.\d+)?)\s*%\s*$/.exec(value);
    if (m !== null) return { percent: Number(m[1]) };
  }
  const bytes = bytesOf(value);
  return bytes === null ? null : { bytes };
}

/** The bytes an amount stands for, a share taken of `of`. */
export function amountBytes(a: Amount, of: number): number {
  return 'bytes' in a ? a.bytes : (a.percent / 100) * of;
}

function show(value: unknown): string {
  return typeof value === 'string' ? `"${value}"` : String(value);
}
