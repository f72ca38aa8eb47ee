import { InvalidArgumentError } from 'commander';
import { inProducerWords, jsonInProducerWords } from '../../engine/analyses/producer/index.js';
import { parseByteText, parseCountText, SnapshotError } from '../../engine/base/index.js';
import type { DeviceModel, Snapshot } from '../../engine/model/index.js';
import { expandPaths } from '../../node/files/expand-paths.js';
import { openSnapshot } from '../../node/files/open-snapshot.js';
import { EXIT_BAD_INPUT, reportError } from '../../node/files/report-error.js';
import { textWidth } from './indent.js';
import { fitToWidth, shortenMiddle } from './text-width.js';

export interface FileOptions {
  device?: number;
  json?: boolean;
}

/**
 * The loop every command shares: load each file, analyse it, print text as it goes or one JSON
 * document at the end ({"files": [...]}), report a bad file in one line and go on with the rest.
 */
export async function runFiles(
  files: string[],
  opts: FileOptions,
  analyse: (
    snapshot: Snapshot,
    devices: DeviceModel[],
    file: string,
  ) => { json: Record<string, unknown>; text: string },
): Promise<void> {
  const reports: Record<string, unknown>[] = [];
  const expanded = expandPaths(files);
  // A directory part of which could not be read (said on stderr): not every snapshot was read.
  let failed = expanded.runs.some((r) => r.run.notRead.length > 0);
  for (const file of expanded.files) {
    let snapshot: Snapshot | undefined;
    try {
      snapshot = await openSnapshot(file, { progress: !opts.json });
      warnImpossible(file, snapshot);
      const report = analyse(snapshot, devicesOf(snapshot, opts.device), file);
      const p = snapshot.producer;
      if (opts.json) reports.push({ file, producer: p, ...jsonInProducerWords(report.json, p) });
      else {
        const width = textWidth();
        const text = inProducerWords(report.text, p);
        process.stdout.write(`${shortenMiddle(file, width)}\n${fitToWidth(text, width)}\n\n`);
      }
    } catch (err) {
      failed = true;
      // An error about a file memlens could read (a --capacity below what it holds) in its words.
      const e = snapshot === undefined ? err : reworded(err, snapshot);
      reportError(file, e);
      if (opts.json) reports.push({ file, error: (e as Error).message });
    }
  }
  if (opts.json) process.stdout.write(`${JSON.stringify({ files: reports }, null, 1)}\n`);
  if (failed) process.exitCode = EXIT_BAD_INPUT;
}

/**
 * What the allocator cannot produce, found at load (model/invariants.ts), on stderr for every
 * command: each command prints figures with the impossible parts left out, and must say so.
 */
function warnImpossible(file: string, snapshot: Snapshot): void {
  for (const v of snapshot.violations)
    process.stderr.write(`memlens: ${file}: warning: ${inProducerWords(v.text, snapshot.producer)}\n`);
}

function reworded(e: unknown, snapshot: Snapshot): unknown {
  if (!(e instanceof SnapshotError)) return e;
  return new SnapshotError(inProducerWords(e.message, snapshot.producer));
}

function devicesOf(snapshot: Snapshot, device: number | undefined): DeviceModel[] {
  if (device === undefined) return snapshot.devices;
  const found = snapshot.devices.filter((d) => d.device === device);
  if (found.length === 0) {
    throw new SnapshotError(
      `has no device ${device} (devices: ${snapshot.devices.map((d) => d.device).join(', ')})`,
    );
  }
  return found;
}

export function parseDevice(v: string): number {
  return checked(parseCountText(v), 'expected a device index (0, 1, ...)');
}

export function parseCount(v: string): number {
  return checked(parseCountText(v), 'expected a non-negative integer (20047 or 20,047)');
}

/** A trace entry as memlens prints it ("20,047") or plain. */
export function parseEntry(v: string): number {
  return checked(parseCountText(v), 'expected a trace entry as printed (20,047 or 20047)');
}

/** A byte size with an optional unit: 80GiB, 1.5GB, 512MiB, 4096. */
export function parseBytes(v: string): number {
  return checked(parseByteText(v), 'expected a size: bytes, or a number with a unit (80GiB, 512MiB, 1.5GB)');
}

function checked(n: number | null, what: string): number {
  if (n === null) throw new InvalidArgumentError(what);
  return n;
}
