import fs, { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, describe, expect, it } from 'vitest';
import { scanRun } from '../../src/node/files/scan-run.js';

const root = mkdtempSync(join(tmpdir(), 'memlens-scan-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

function put(path: string, bytes: string | Uint8Array = '\x80\x04}.'): string {
  const p = join(root, path);
  mkdirSync(join(p, '..'), { recursive: true });
  writeFileSync(p, bytes);
  return p;
}

const rel = (base: string) => (p: string) => relative(base, p);

describe('scanning a run directory', () => {
  it('follows links to files and folders, reads each folder once, names a link it cannot follow', () => {
    const a = join(root, 'links');
    put('links/real/step1/torch_memory_rank0_pid1.pickle');
    put('elsewhere/step2/torch_memory_rank0_pid1.pickle');
    put('elsewhere/loose/torch_memory_rank1_pid2.pickle');
    symlinkSync(join(root, 'elsewhere', 'step2'), join(a, 'step2'));
    symlinkSync(
      join(root, 'elsewhere', 'loose', 'torch_memory_rank1_pid2.pickle'),
      join(a, 'real', 'step1', 'linked.pickle'),
    );
    // A link back up the tree, and a second name for a file already found.
    symlinkSync(a, join(a, 'real', 'up'));
    symlinkSync(join(a, 'real', 'step1', 'torch_memory_rank0_pid1.pickle'), join(a, 'again.pickle'));
    symlinkSync(join(root, 'missing'), join(a, 'dangling.pickle'));
    const scan = scanRun(a);
    expect(scan.files.map(rel(a)).sort()).toEqual([
      'real/step1/linked.pickle',
      'real/step1/torch_memory_rank0_pid1.pickle',
      'step2/torch_memory_rank0_pid1.pickle',
    ]);
    const why = Object.fromEntries(scan.skipped.map((s) => [rel(a)(s.path), s.reason]));
    expect(Object.keys(why).sort()).toEqual(['again.pickle', 'real/up']);
    expect(why['again.pickle']).toBe(
      `the same file as ${join(a, 'real', 'step1', 'torch_memory_rank0_pid1.pickle')}`,
    );
    expect(why['real/up']).toBe(`the same folder as ${a}, read once`);
    expect(scan.notRead).toEqual([
      { path: join(a, 'dangling.pickle'), reason: expect.stringMatching(/^ENOENT: /) },
    ]);
  });

  it('has no depth limit: a snapshot ten folders down in a sweep tree is found', () => {
    const deep =
      'sweep/lr_1e-4/seed_3/outputs/2026-11-28/run_a/profiling/memory_snapshot/step_000000000002/replica_0';
    put(`${deep}/000000_step_2.pickle`);
    const scan = scanRun(join(root, 'sweep'));
    expect(scan.files.map(rel(join(root, 'sweep')))).toEqual([
      `${deep.slice('sweep/'.length)}/000000_step_2.pickle`,
    ]);
    expect(deep.split('/').length).toBeGreaterThanOrEqual(10);
  });

  it('skips configs, Chrome traces, plots and tokenizers beside the snapshots, each with why', () => {
    const d = 'beside';
    put(`${d}/torch_traces/rank0.3.memory_snapshot.pickle.gz`, gzipSync(Buffer.from('\x80\x04}.')));
    put(`${d}/torch_traces/rank0.3.memory_snapshot.html`, '<html></html>');
    put(`${d}/torch_traces/rank0.3.pt.trace.json`, '{"schemaVersion": 1, "traceEvents": []}');
    put(`${d}/torch_traces/rank0_oom_segment_flamegraph.svg`, '<svg/>');
    put(
      `${d}/traces/iteration_3/rank0_trace.json.gz`,
      gzipSync(Buffer.from('{"traceEvents": [{"ph": "X"}]}')),
    );
    put(`${d}/training_config.json`, '{"learning_rate": 1e-4}');
    put(`${d}/checkpoint-10/tokenizer.json`, '{"version": "1.0", "model": {}}');
    put(`${d}/snap.json`, '{\n  "segments": [],\n  "device_traces": []\n}');
    put(
      `${d}/segments.json.gz`,
      gzipSync(Buffer.from('[{"device": 0, "address": 1, "total_size": 2097152}]')),
    );
    const base = join(root, d);
    const scan = scanRun(base);
    expect(scan.files.map(rel(base)).sort()).toEqual([
      'segments.json.gz',
      'snap.json',
      'torch_traces/rank0.3.memory_snapshot.pickle.gz',
    ]);
    const why = Object.fromEntries(scan.skipped.map((s) => [rel(base)(s.path), s.reason]));
    expect(Object.keys(why).sort()).toEqual([
      'checkpoint-10/tokenizer.json',
      'torch_traces/rank0.3.memory_snapshot.html',
      'torch_traces/rank0.3.pt.trace.json',
      'torch_traces/rank0_oom_segment_flamegraph.svg',
      'traces/iteration_3/rank0_trace.json.gz',
      'training_config.json',
    ]);
    expect(why['torch_traces/rank0.3.pt.trace.json']).toMatch(/Chrome trace/);
    expect(why['traces/iteration_3/rank0_trace.json.gz']).toMatch(/Chrome trace/);
    expect(why['training_config.json']).toMatch(/without segments/);
    expect(why['torch_traces/rank0.3.memory_snapshot.html']).toMatch(/not a snapshot file name/);
    expect(scan.notRead).toEqual([]);
  });

  it('names an unreadable subfolder and goes on with the rest (EACCES through the seam: tests run as root)', () => {
    put('locked/step1/torch_memory_rank0_pid1.pickle');
    put('locked/step2/torch_memory_rank0_pid1.pickle');
    const locked = join(root, 'locked', 'step2');
    const scan = scanRun(join(root, 'locked'), {
      readdir: (dir) => {
        if (dir === locked)
          throw Object.assign(new Error(`EACCES: permission denied, scandir '${dir}'`), { code: 'EACCES' });
        return fs.readdirSync(dir, { withFileTypes: true });
      },
      stat: fs.statSync,
      realpath: fs.realpathSync,
    });
    expect(scan.files.map(rel(join(root, 'locked')))).toEqual(['step1/torch_memory_rank0_pid1.pickle']);
    expect(scan.notRead).toEqual([{ path: locked, reason: 'EACCES: permission denied' }]);
  });
});
