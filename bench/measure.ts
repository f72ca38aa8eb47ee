/**
 * One measurement in a fresh process, so peak RSS belongs to it alone:
 *   node dist-tools/bench/measure.js read|touch|summary FILE
 * prints one JSON line {ms, bytes, entries, maxRssBytes};
 *   node dist-tools/bench/measure.js cli RESULT.json COMMAND ARGS...
 * runs the memlens CLI in this process and writes {ms, cpuMs, maxRssBytes, exitCode} to RESULT.json as
 * the process exits (the CLI owns stdout, and it ends with process.exit).
 */
import { writeFileSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { summarize } from '../src/engine/analyses/summary/index.js';
import { loadSnapshot } from '../src/engine/load/index.js';
import type { DeviceModel } from '../src/engine/model/index.js';
import { fileSize, readChunks } from '../src/node/files/read-file.js';

/** Reads the file in 4 MiB chunks; with `touch`, also sums every byte in JS (the JS floor). */
async function readOnly(path: string, touch: boolean): Promise<number> {
  const handle = await open(path, 'r');
  const buf = new Uint8Array(4 * 1024 * 1024);
  let sum = 0;
  for (;;) {
    const { bytesRead } = await handle.read(buf, 0, buf.length, null);
    if (bytesRead === 0) break;
    if (touch) for (let i = 0; i < bytesRead; i++) sum = (sum + buf[i]!) | 0;
  }
  await handle.close();
  return sum;
}

async function runCli(result: string, args: string[]): Promise<void> {
  const t0 = performance.now();
  process.on('exit', (exitCode) => {
    const ms = performance.now() - t0;
    const usage = process.resourceUsage();
    const maxRssBytes = usage.maxRSS * 1024;
    // CPU time (user + system, all threads): on a shared machine it says what wall time cannot.
    const cpuMs = (usage.userCPUTime + usage.systemCPUTime) / 1000;
    writeFileSync(result, JSON.stringify({ ms, cpuMs, maxRssBytes, exitCode }));
  });
  process.argv = [process.argv[0]!, 'memlens', ...args];
  await import('../src/cli/main.js');
}

/**
 * What the other commands build on first use and a summary does not: the allocation table, the
 * per-entry totals and the live index's checkpoints (one query builds them).
 */
function buildEveryIndex(d: DeviceModel): void {
  void d.allocations;
  void d.totals.allocated;
  d.live.aliveAfter(-1);
}

async function main(): Promise<void> {
  const [what, path, ...rest] = process.argv.slice(2);
  if (what === 'cli' && path) return runCli(path, rest);
  if (!path || (what !== 'read' && what !== 'touch' && what !== 'summary' && what !== 'model')) {
    throw new Error('usage: measure read|touch|summary|model FILE');
  }
  const size = await fileSize(path);
  const t0 = performance.now();
  let entries = 0;
  if (what === 'read' || what === 'touch') await readOnly(path, what === 'touch');
  else {
    const snapshot = await loadSnapshot(readChunks(path), { sizeHint: size });
    if (what === 'model') for (const d of snapshot.devices) buildEveryIndex(d);
    const s = summarize(snapshot);
    entries = s.devices.reduce((n, d) => n + d.trace_entries, 0);
  }
  const ms = performance.now() - t0;
  const maxRssBytes = process.resourceUsage().maxRSS * 1024;
  process.stdout.write(`${JSON.stringify({ ms, bytes: size, entries, maxRssBytes })}\n`);
}

main().catch((e: unknown) => {
  process.stderr.write(`measure: ${e instanceof Error ? e.message : String(e)}\n`);
  process.exitCode = 1;
});
