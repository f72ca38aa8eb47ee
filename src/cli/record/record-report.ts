/**
 * What `memlens record` says when the command has ended: the run at a glance (`memlens run`'s
 * report on the snapshots written, or the files when there are none), why there are no snapshots
 * when that is so, and the command that opens the run. On stderr: stdout is the program's (with
 * --json, only the one line on why there is no snapshot is said here).
 */
import path from 'node:path';
import { shellWord } from '../../engine/analyses/diagnosis/index.js';
import { runReport } from '../../engine/analyses/run/index.js';
import { formatBytes, plural } from '../../engine/base/index.js';
import { discoverRun } from '../../engine/run-layout/index.js';
import { decodeRun } from '../../node/workers/decode-run.js';
import { renderRun } from '../commands/run-text.js';
import type { ProcRecord, RunManifest } from './record-manifest.js';

const say = (line: string) => process.stderr.write(`memlens record: ${line}\n`);

export async function reportRecording(
  m: RunManifest,
  procs: ProcRecord[],
  opts: { cycles: boolean; summary: boolean },
): Promise<void> {
  const { cycles } = opts;
  const why = whyNoSnapshots(m, procs, cycles);
  if (why !== null) say(why);
  if (!opts.summary) return;
  const bytes = [...m.files, ...m.cycles].reduce((s, f) => s + f.bytes, 0);
  const parts = [plural(m.files.length, 'snapshot')];
  if (cycles) parts.push(plural(m.cycles.length, 'cycle graph'));
  if (m.dropped.length > 0) parts.push(`${plural(m.dropped.length, 'window')} dropped (--max-bytes)`);
  say(`${parts.join(', ')} in ${m.out} (${formatBytes(bytes)}); manifest: ${path.join(m.out, 'run.json')}`);
  if (m.files.length > 0) {
    const run = discoverRun(
      m.files.map((f) => path.join(m.out, f.path)),
      { roots: [m.out], recorded: [m.out] },
    );
    const snapshots = await decodeRun(run, { cache: true, progress: false });
    process.stderr.write(`${renderRun(runReport(m.out, run, snapshots), process.stderr.columns || 100)}\n`);
  } else {
    for (const f of m.cycles.slice(0, 10)) process.stderr.write(`  ${f.path}  ${formatBytes(f.bytes)}\n`);
    if (m.cycles.length > 10) process.stderr.write(`  … ${plural(m.cycles.length - 10, 'more file')}\n`);
  }
  if (m.files.length > 0) say(`open it: memlens view ${shellWord(m.out)}`);
  if (m.cycles.length > 0) say(`its reference cycles: memlens cycles ${shellWord(m.out)}`);
}

/** One line on why no snapshot was written, when none was: each process said what it saw. */
function whyNoSnapshots(m: RunManifest, procs: ProcRecord[], cycles: boolean): string | null {
  if (m.files.length > 0) return null;
  const withTorch = procs.filter((p) => p.torch !== null);
  if (withTorch.length === 0) return 'no process of the command imported torch: nothing to record';
  const noDevice = withTorch.find((p) => p.cuda === 'cpu-only build' || p.cuda === 'no device');
  if (noDevice !== undefined && !withTorch.some((p) => p.cuda === 'recording')) {
    const also = cycles ? ' (recording reference cycles only)' : '';
    return `snapshots need a CUDA device; torch ${noDevice.torch} sees none${also}`;
  }
  if (withTorch.every((p) => p.cuda === 'not initialised'))
    return 'the command never used CUDA: no snapshot to write';
  return null;
}
