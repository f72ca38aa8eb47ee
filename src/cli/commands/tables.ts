import type { Command } from 'commander';
import { InvalidArgumentError } from 'commander';
import { parseRangeText } from '../../engine/base/index.js';
import type { DeviceModel, Snapshot } from '../../engine/model/index.js';
import {
  blockTable,
  csvByteChunks,
  eventTable,
  jsonRowChunks,
  type RowTable,
  type Selection,
  selectRows,
} from '../../engine/views/tables/index.js';
import { openSnapshot } from '../../node/files/open-snapshot.js';
import { EXIT_BAD_INPUT, reportError } from '../../node/files/report-error.js';
import { parseCount, parseDevice } from '../text/run-files.js';

interface TableCliOptions {
  range?: [number, number];
  filter: string[];
  sort?: string;
  format: 'csv' | 'json';
  json?: boolean;
  limit?: number;
  device?: number;
}

type MakeTable = (s: Snapshot, d: DeviceModel) => RowTable;

/** `memlens events` and `memlens blocks`: the two tables, filtered, sorted and streamed out. */
export function tableCommands(program: Command): void {
  tableCommand(
    program,
    'events',
    'one row per trace entry: action, address, size, stream, totals after it, innermost user frame',
    eventTable,
  );
  tableCommand(
    program,
    'blocks',
    'one row per allocation: address, requested size, state at dump, its alloc/free entries, user frame',
    blockTable,
  );
}

function tableCommand(program: Command, name: string, description: string, make: MakeTable): void {
  program
    .command(name)
    .description(description)
    .argument('<file>', 'snapshot file (.pickle, .json, optionally gzipped)')
    .option('--range <a:b>', 'rows a to b (inclusive; trace entry indices for events)', parseRange)
    .option(
      '--filter <cond>',
      'keep rows meeting COLUMN OP VALUE (OP: = != >= <= > < ~contains); repeatable',
      collect,
      [],
    )
    .option('--sort <column>', 'sort by a column; prefix with - for descending')
    .option(
      '--format <fmt>',
      'csv or json (JSON: {"files": [{"file", "devices": [{"device", "rows": [...]}]}]})',
      parseFormat,
      'csv',
    )
    .option('--json', 'the same as --format json')
    .option('--limit <n>', 'print at most n rows per device', parseCount)
    .option('--device <n>', 'only this device', parseDevice)
    .action(async (file: string, opts: TableCliOptions) => {
      try {
        const snapshot = await openSnapshot(file, { progress: true });
        const devices = snapshot.devices.filter((d) => opts.device === undefined || d.device === opts.device);
        if (opts.format === 'json' || opts.json) await writeJson(file, snapshot, devices, make, opts);
        else await writeCsv(snapshot, devices, make, opts);
      } catch (e) {
        reportError(file, e);
        process.exitCode = EXIT_BAD_INPUT;
      }
    });
}

function selection(opts: TableCliOptions): Selection {
  const sel: Selection = { filter: opts.filter };
  if (opts.range) sel.range = opts.range;
  if (opts.sort) sel.sort = opts.sort;
  return sel;
}

function rowsOf(table: RowTable, opts: TableCliOptions): Int32Array {
  const rows = selectRows(table, selection(opts));
  return opts.limit === undefined ? rows : rows.subarray(0, opts.limit);
}

async function writeCsv(
  s: Snapshot,
  devices: DeviceModel[],
  make: MakeTable,
  opts: TableCliOptions,
): Promise<void> {
  for (const [k, d] of devices.entries()) {
    const table = make(s, d);
    for (const chunk of csvByteChunks(d.device, table, rowsOf(table, opts), { header: k === 0 })) {
      await writeOut(chunk);
    }
  }
}

async function writeJson(
  file: string,
  s: Snapshot,
  devices: DeviceModel[],
  make: MakeTable,
  opts: TableCliOptions,
): Promise<void> {
  await writeOut(`{"files": [{"file": ${JSON.stringify(file)}, "devices": [\n`);
  for (const [k, d] of devices.entries()) {
    const table = make(s, d);
    await writeOut(`${k > 0 ? ',' : ''}{"device": ${d.device}, "rows": [\n`);
    for (const chunk of jsonRowChunks(table, rowsOf(table, opts))) await writeOut(chunk);
    await writeOut(']}\n');
  }
  await writeOut(']}]}\n');
}

/** Waits for stdout to drain when it asks to, so a slow reader never makes the output queue up. */
async function writeOut(chunk: string | Uint8Array): Promise<void> {
  if (!process.stdout.write(chunk)) await new Promise((resolve) => process.stdout.once('drain', resolve));
}

/** A:B with entries as printed ("20,047:30,000"); either side may be left out. */
export function parseRange(v: string): [number, number] {
  const range = parseRangeText(v);
  if (range === null)
    throw new InvalidArgumentError('expected A:B (either may be left out), e.g. 1000:2000 or 20,047:30,000');
  return range;
}

function parseFormat(v: string): 'csv' | 'json' {
  if (v !== 'csv' && v !== 'json') throw new InvalidArgumentError('expected csv or json');
  return v;
}

function collect(v: string, previous: string[]): string[] {
  return [...previous, v];
}
