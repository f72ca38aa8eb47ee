#!/usr/bin/env -S node --no-concurrent-recompilation
// The flag: Node 20 can deadlock at exit when a background TurboFan job waits for a GC while the
// main thread shuts the platform down (seen ~1 in 80 runs on a busy machine; nodejs/node#54918).
// Compiling on the main thread costs nothing measurable here. Keep NODE_FLAGS in node-flags.ts in step.
import { Command, InvalidArgumentError } from 'commander';
import { summarize } from '../engine/analyses/summary.js';
import { SnapshotError } from '../engine/errors.js';
import { renderSummary } from './commands/summary.js';
import { openSnapshot } from './open-snapshot.js';

/** Exit code for bad input (unreadable, not a snapshot, corrupt). */
const EXIT_BAD_INPUT = 2;

const program = new Command()
  .name('memlens')
  .description(
    'Where did my GPU memory go? Reads PyTorch CUDA memory snapshots (torch.cuda.memory._dump_snapshot).',
  )
  .version('0.1.0')
  .showHelpAfterError();

program
  .command('summary')
  .description(
    'per device: the torch.cuda.memory_summary() table, allocator settings, trace facts and warnings',
  )
  .argument('<file...>', 'snapshot files (.pickle, .json, optionally gzipped)')
  .option('--device <n>', 'only this device', parseDevice)
  .option('--json', 'print JSON: {"files": [{"file", "devices": [...]}]}')
  .action(async (files: string[], opts: { device?: number; json?: boolean }) => {
    const reports: Record<string, unknown>[] = [];
    let failed = false;
    for (const file of files) {
      try {
        const snapshot = await openSnapshot(file, { progress: !opts.json });
        const summary = summarize(snapshot, opts.device);
        if (opts.device !== undefined && summary.devices.length === 0) {
          throw new SnapshotError(
            `has no device ${opts.device} (devices: ${snapshot.devices.map((d) => d.device).join(', ')})`,
          );
        }
        if (opts.json) reports.push({ file, ...summary });
        else process.stdout.write(`${renderSummary(file, summary)}\n\n`);
      } catch (e) {
        failed = true;
        reportError(file, e);
        if (opts.json) reports.push({ file, error: (e as Error).message });
      }
    }
    if (opts.json) process.stdout.write(`${JSON.stringify({ files: reports }, null, 1)}\n`);
    if (failed) process.exitCode = EXIT_BAD_INPUT;
  });

function parseDevice(v: string): number {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 0) throw new InvalidArgumentError('expected a device index (0, 1, ...)');
  return n;
}

function reportError(file: string, e: unknown): void {
  const message = e instanceof Error ? e.message : String(e);
  process.stderr.write(`memlens: ${file}: ${message.split('\n')[0]}\n`);
}

program
  .parseAsync(process.argv)
  .catch((e: unknown) => {
    process.stderr.write(`memlens: ${e instanceof Error ? e.message.split('\n')[0] : String(e)}\n`);
    process.exitCode = EXIT_BAD_INPUT;
  })
  .finally(exitWhenFlushed);

/**
 * Exit explicitly once stdout and stderr have drained, instead of letting the event loop run
 * dry, where Node 20's NodePlatform::DrainTasks can also deadlock (nodejs/node#54918).
 */
function exitWhenFlushed(): void {
  const code = Number(process.exitCode ?? 0);
  process.stdout.write('', () => process.stderr.write('', () => process.exit(code)));
}
