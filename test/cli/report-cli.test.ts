import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync, gzipSync } from 'node:zlib';
import { beforeAll, describe, expect, it } from 'vitest';
import { generateSnapshotBytes } from '../../scripts/synth/index.js';
import { NODE_FLAGS } from '../../src/node/node-flags.js';
import { awaitableCycle, writeCycleFiles, writeCycleRun } from '../helpers/cycle-files.js';
import { writeGeneratedRun } from '../helpers/generated-run.js';

/**
 * `memlens report` as a command: what it writes (the app inlined, the snapshot's own bytes
 * gzipped inside, nothing linked) and how it refuses bad input without leaving a file behind.
 * The page in a browser: report-page.test.ts.
 */
const ROOT = join(import.meta.dirname, '..', '..');
const CLI = join(ROOT, 'dist', 'cli', 'main.js');
const EXAMPLE = join(ROOT, 'examples', 'example_snapshot.pickle');
let dir = '';

function run(...args: string[]) {
  const r = spawnSync(process.execPath, [...NODE_FLAGS, CLI, ...args], {
    encoding: 'utf8',
    timeout: 60_000,
    cwd: dir,
  });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** One line on stderr naming what is wrong, exit 2, and no file (nor a temporary one) written. */
function expectRefused(r: ReturnType<typeof run>, pattern: RegExp, before: string[]): void {
  expect(r.status, r.stderr).toBe(2);
  expect(r.stdout).toBe('');
  const lines = r.stderr.trimEnd().split('\n');
  expect(lines, r.stderr).toHaveLength(1);
  expect(lines[0]).toMatch(pattern);
  expect(readdirSync(dir).sort()).toEqual(before);
}

describe('memlens report (command)', () => {
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'memlens-report-cli-'));
  });

  it('writes one HTML page: the app inlined, the snapshot gzipped inside, nothing linked', () => {
    const r = run('report', EXAMPLE, '-o', 'example.html', '--json');
    expect(r.status, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout) as {
      output: string;
      output_bytes: number;
      files: { name: string; bytes: number; embedded_bytes: number }[];
    };
    const html = readFileSync(join(dir, 'example.html'), 'utf8');
    expect(out.output_bytes).toBe(Buffer.byteLength(html));
    expect(out.files).toEqual([
      {
        name: 'example_snapshot.pickle',
        bytes: readFileSync(EXAMPLE).length,
        embedded_bytes: expect.any(Number),
      },
    ]);
    expect(html).toMatch(/^<!doctype html>/i);
    expect(html).toContain('<title>memlens report: example_snapshot.pickle</title>');
    // Nothing for the browser to fetch: the page's tags link nothing but data: URLs (what the
    // scripts do is checked in a browser with the network blocked: report-page.test.ts).
    const tags = html.replace(/(<script\b[^>]*>)[\s\S]*?<\/script>/g, '$1');
    expect(tags.match(/\b(src|href)="(?!data:)[^"]*"/g)).toBeNull();
    expect(tags.match(/<script\b[^>]*>/g)).toEqual([
      '<script id="memlens-report" type="application/json">',
      // The app before its data, so it starts while the browser reads the data.
      '<script>',
      '<script id="memlens-data-0-0" type="application/octet-stream">',
    ]);
    const data = /<script id="memlens-data-0-0" type="application\/octet-stream">([^<]*)<\/script>/.exec(
      html,
    );
    const gz = Buffer.from(data![1]!, 'base64');
    expect(gz.length).toBe(out.files[0]!.embedded_bytes);
    expect(gunzipSync(gz).equals(readFileSync(EXAMPLE))).toBe(true);
  });

  it('an already gzipped snapshot is carried as it is', () => {
    const gz = join(dir, 'small.pickle.gz');
    const bytes = generateSnapshotBytes({ events: 500, seed: 3 }).bytes;
    writeFileSync(gz, gzipSync(bytes));
    const r = run('report', gz, '-o', 'small.html', '--json');
    expect(r.status, r.stderr).toBe(0);
    const html = readFileSync(join(dir, 'small.html'), 'utf8');
    const data = /<script id="memlens-data-0-0" type="application\/octet-stream">([^<]*)<\/script>/.exec(
      html,
    );
    expect(Buffer.from(data![1]!, 'base64').equals(readFileSync(gz))).toBe(true);
  });

  it('bad input: one line, exit 2, no page and no temporary file', () => {
    writeFileSync(join(dir, 'notes.pickle'), 'these are notes, not a pickle\n');
    const before = readdirSync(dir).sort();
    expectRefused(run('report', 'notes.pickle', '-o', 'notes.html'), /^memlens: notes\.pickle: /, before);
    expectRefused(run('report', 'missing.pickle', '-o', 'm.html'), /^memlens: missing\.pickle: /, before);
    expectRefused(
      run('report', EXAMPLE, '-o', join(dir, 'no-such-dir', 'r.html')),
      /^memlens: cannot write .*no-such-dir.*r\.html \(ENOENT\)$/,
      before,
    );
    // Never over a snapshot (or anything that is not an earlier page).
    expectRefused(
      run('report', EXAMPLE, '-o', 'notes.pickle'),
      /^memlens: notes\.pickle: exists and is not an HTML page; not overwriting it/,
      before,
    );
    expect(readFileSync(join(dir, 'notes.pickle'), 'utf8')).toBe('these are notes, not a pickle\n');
    // Over the budget: refused, never cut.
    expectRefused(
      run('report', EXAMPLE, '-o', 'big.html', '--max-bytes', '10KiB'),
      /^memlens: .*example_snapshot\.pickle: gzipped it is over --max-bytes 10\.0 KiB: raise --max-bytes, or cut a window with memlens slice$/,
      before,
    );
    expect(run('report', EXAMPLE).stderr).toMatch(/required option '-o, --output/);
  });

  it('-o - writes the same page to stdout', () => {
    const r = run('report', EXAMPLE, '-o', '-');
    expect(r.status, r.stderr).toBe(0);
    expect(run('report', EXAMPLE, '-o', 'file.html').status).toBe(0);
    const written = readFileSync(join(dir, 'file.html'), 'utf8');
    expect(r.stdout).toBe(written);
  });

  it('a run: a snapshot that cannot be read is left out and says why', () => {
    const files = writeGeneratedRun(join(dir, 'run'), { ranks: 2, windows: 2, seed: 5 });
    writeFileSync(join(dir, 'run', 'step2', 'torch_memory_rank2_pid9.pickle'), 'not a pickle');
    const r = run('report', 'run', '-o', 'run.html', '--json');
    expect(r.status, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout) as {
      files: { name: string }[];
      omitted: { name: string; reason: string }[];
    };
    expect(out.files).toHaveLength(files.length);
    expect(out.omitted).toEqual([
      {
        name: 'run/step2/torch_memory_rank2_pid9.pickle',
        label: 'step 2 · rank 2',
        size: 12,
        reason: expect.stringMatching(/^could not be read: /),
        kind: 'snapshot',
      },
    ]);
    // Named by an absolute path, the page still says nothing of where the run lives.
    expect(run('report', join(dir, 'run'), '-o', 'abs.html').status).toBe(0);
    expect(readFileSync(join(dir, 'abs.html'), 'utf8')).not.toContain(dir);
    const text = run('report', 'run', '-o', 'run.html').stdout;
    expect(text).toMatch(
      /^wrote run\.html \(.*\)\n {2}4 snapshots: .* gzipped\n {2}left out \(listed on the page\): 1 snapshot\n {4}run\/step2\/torch_memory_rank2_pid9\.pickle: could not be read: /,
    );
  });

  it('a run with recorded cycles carries each one as `memlens view` serves it, counted against --max-bytes', () => {
    const recorded = writeCycleRun(join(dir, 'cyclerun'));
    const names = [...recorded.cycles.map((c) => c.path), ...recorded.unlinked]
      .map((p) => p.slice(dir.length + 1))
      .sort();
    const r = run('report', join(dir, 'cyclerun'), '-o', 'cycles.html', '--json');
    expect(r.status, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout) as {
      files: { name: string }[];
      cycles: { name: string; bytes: number; embedded_bytes: number }[];
      omitted: { name: string; kind: string }[];
    };
    expect(out.cycles.map((c) => c.name).sort()).toEqual(names);
    expect(out.files).toHaveLength(2);
    expect(out.omitted).toEqual([]);
    // Each cycle's gzipped JSON, as the page reads it: the graph, its report, its window by the page's name.
    const html = readFileSync(join(dir, 'cycles.html'), 'utf8');
    expect(html).not.toContain(dir);
    const manifest = JSON.parse(
      /<script id="memlens-report" type="application\/json">([^<]*)<\/script>/.exec(html)![1]!,
    ) as { cycles: { name: string; size: number; data: string[] }[] };
    const first = recorded.cycles[0]!;
    const entry = manifest.cycles.find((c) => first.path.endsWith(c.name.slice('cyclerun'.length)))!;
    const part = new RegExp(`<script id="${entry.data[0]}" type="application/octet-stream">([^<]*)<`).exec(
      html,
    )!;
    const served = JSON.parse(gunzipSync(Buffer.from(part[1]!, 'base64')).toString('utf8')) as {
      graph: { rank: number };
      report: { bytes: number };
      snapshot: string;
    };
    expect(served.report.bytes).toBe(first.bytes);
    expect(served.snapshot).toBe(recorded.windows[first.window]!.slice(dir.length + 1));

    // A budget that holds the first cycle alone: the rest, and every snapshot, are listed as left out.
    const budget = String(out.cycles[0]!.embedded_bytes);
    const small = run('report', 'cyclerun', '-o', 'small-cycles.html', '--max-bytes', budget, '--json');
    const cut = JSON.parse(small.stdout) as typeof out;
    expect(cut.cycles.map((c) => c.name)).toEqual([out.cycles[0]!.name]);
    expect(cut.files).toEqual([]);
    expect(cut.omitted.filter((o) => o.kind === 'cycle').map((o) => o.name)).toEqual(
      out.cycles.slice(1).map((c) => c.name),
    );
    expect(cut.omitted.filter((o) => o.kind === 'snapshot')).toHaveLength(2);
    expect(run('report', 'cyclerun', '-o', 'small-cycles.html', '--max-bytes', budget).stdout).toMatch(
      new RegExp(
        `\\)\n {2}1 recorded cycle: .* gzipped\n {2}left out \\(listed on the page\\): 2 snapshots, ${out.cycles.length - 1} recorded cycles\n`,
      ),
    );
  });

  it('a run recorded without a GPU (cycles, no snapshot) makes a report', () => {
    writeCycleFiles(join(dir, 'cpu-run'), [
      awaitableCycle({ time_us: 1_700_000_000_000_000, step: 3, device: 'cpu' }, [
        { bytes: 1024, data_ptr: 4096, device: 'cpu' },
      ]),
    ]);
    const r = run('report', 'cpu-run', '-o', 'cpu.html', '--json');
    expect(r.status, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout) as { files: unknown[]; cycles: { name: string }[] };
    expect(out.files).toEqual([]);
    expect(out.cycles.map((c) => c.name)).toEqual(['cpu-run/cycles/rank0_pid4242_gc1.json']);
    // A directory with neither snapshots nor cycles is still refused in one line.
    mkdirSync(join(dir, 'empty-run'));
    const before = readdirSync(dir).sort();
    expectRefused(run('report', 'empty-run', '-o', 'e.html'), /^memlens: .*empty-run/, before);
  });

  it('replaces an earlier page', () => {
    expect(run('report', EXAMPLE, '-o', 'again.html').status).toBe(0);
    const r = run('report', EXAMPLE, '-o', 'again.html');
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toMatch(
      /^wrote again\.html \([\d.]+ KiB, [\d,]+ bytes\)\n {2}example_snapshot\.pickle: 457 KiB, [\d.]+ KiB gzipped\n$/,
    );
  });
});
