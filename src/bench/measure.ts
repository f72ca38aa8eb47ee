/**
 * One measurement in a fresh process, so peak RSS belongs to it alone:
 *   node dist/bench/measure.js read|summary FILE
 * prints one JSON line {ms, bytes, entries, maxRssBytes}.
 */
import { open } from 'node:fs/promises';
import { fileSize, readChunks } from '../cli/read-file.js';
import { summarize } from '../engine/analyses/summary.js';
import { loadSnapshot } from '../engine/load.js';

async function readOnly(path: string): Promise<number> {
  const handle = await open(path, 'r');
  const buf = new Uint8Array(4 * 1024 * 1024);
  let total = 0;
  for (;;) {
    const { bytesRead } = await handle.read(buf, 0, buf.length, null);
    if (bytesRead === 0) break;
    total += bytesRead;
  }
  await handle.close();
  return total;
}

async function main(): Promise<void> {
  const [what, path] = process.argv.slice(2);
  if (!path || (what !== 'read' && what !== 'summary')) throw new Error('usage: measure read|summary FILE');
  const size = await fileSize(path);
  const t0 = performance.now();
  let entries = 0;
  if (what === 'read') await readOnly(path);
  else {
    const snapshot = await loadSnapshot(readChunks(path), { sizeHint: size });
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
