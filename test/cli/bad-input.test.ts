import { spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { beforeAll, describe, expect, it } from 'vitest';
import { NODE_FLAGS } from '../../src/node/node-flags.js';
import { EDGE_DIR } from '../helpers/edge-fixtures.js';

const CLI = join(import.meta.dirname, '..', '..', 'dist', 'cli', 'main.js');
const EXAMPLE = join(import.meta.dirname, '..', '..', 'examples', 'example_snapshot.pickle');
let dir = '';

function run(...args: string[]) {
  const r = spawnSync(process.execPath, [...NODE_FLAGS, CLI, ...args], { encoding: 'utf8', timeout: 30_000 });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr, signal: r.signal };
}

function makeDir(name: string): string {
  mkdirSync(join(dir, name), { recursive: true });
  return join(dir, name);
}

function write(name: string, bytes: Uint8Array | string): string {
  const path = join(dir, name);
  writeFileSync(path, bytes);
  return path;
}

/** One line on stderr naming the file, exit code 2, nothing on stdout, no stack trace. */
function expectCleanFailure(path: string, pattern: RegExp): void {
  const r = run('summary', path);
  expect(r.signal, 'must not hang').toBeNull();
  expect(r.status).toBe(2);
  expect(r.stdout).toBe('');
  const lines = r.stderr.trimEnd().split('\n');
  expect(lines, r.stderr).toHaveLength(1);
  expect(lines[0]!.startsWith(`memlens: ${path}: `), lines[0]).toBe(true);
  expect(lines[0]).toMatch(pattern);
  expect(r.stderr).not.toMatch(/\n\s+at /);
}

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'memlens-bad-'));
});

describe('memlens summary on bad input', () => {
  const example = () => new Uint8Array(readFileSync(EXAMPLE));
  const cases: [string, () => string, RegExp][] = [
    ['missing file', () => join(dir, 'nope.pickle'), /no such file/],
    ['directory without snapshots', () => makeDir('adir'), /no snapshot files/],
    ['empty file', () => write('empty.pickle', ''), /empty file/],
    [
      'random bytes',
      () =>
        write(
          'random.bin',
          new Uint8Array(4096).map((_, i) => (i * 7919 + 13) & 0xff),
        ),
      /opcode|pickle|truncated/,
    ],
    [
      'JSON that is not a snapshot',
      () => write('other.json', '{"hello": [1, 2]}'),
      /not a memory snapshot.*'hello'/,
    ],
    ['invalid JSON', () => write('bad.json', '{"segments": [1, 2'), /not valid JSON/],
    [
      'a text file given as a snapshot: what it starts with, no opcode jargon',
      () => write('notes.txt', 'this is a text file\n'),
      /: not a pickle: starts with 't' \(expected a snapshot/,
    ],
    ['a Markdown file', () => write('README.md', '# notes\n'), /: not a pickle: starts with '#'/],
    [
      'JSON after a byte order mark is JSON',
      () => write('bom.json', '\ufeff{"hello": 1}'),
      /not a memory snapshot.*'hello'/,
    ],
    [
      'JSON after blank lines is still JSON',
      () => write('spaced.json', '\n\n  {"hello": 1}'),
      /not a memory snapshot.*'hello'/,
    ],
    [
      'pickle that is not a snapshot',
      () => write('list.pickle', Uint8Array.from([0x80, 4, 0x5d, 0x94, 0x4b, 1, 0x61, 0x2e])),
      /segment 0 is an int/,
    ],
    [
      'unknown opcode',
      () => write('unknown-op.pickle', Uint8Array.from([0x80, 4, 0xff, 0x2e])),
      /unknown opcode 0xff .*at byte 2/,
    ],
    [
      'REDUCE that would run os.system',
      () => write('evil.pickle', readFileSync(join(EDGE_DIR, 'evil_reduce.pickle'))),
      /never runs pickled code/,
    ],
    [
      'torch.save-style persistent ids',
      () => write('persid.pickle', readFileSync(join(EDGE_DIR, 'torch_like_persid.pickle'))),
      /not a memory snapshot/,
    ],
    ['huge int', () => write('hugeint.pickle', hugeInt()), /int of 1000000 bytes/],
    [
      'huge length claim',
      () => write('huge-len.pickle', Uint8Array.from([0x80, 4, 0x8d, 0, 0, 0, 0, 0, 1, 0, 0, 0x2e])),
      /larger than memlens accepts/,
    ],
    ['deep nesting', () => write('deep.pickle', deepNesting(200_000)), /segment 0 is a list/],
    ['truncated snapshot', () => write('trunc.pickle', example().subarray(0, 100_000)), /truncated/],
    [
      'corrupt gzip',
      () => write('bad.pickle.gz', Uint8Array.from([0x1f, 0x8b, 8, 0, 1, 2, 3, 4, 5, 6, 7])),
      /gzip/,
    ],
    [
      'snapshot without segments or trace',
      () => write('empty-snap.json', '{"segments": [], "device_traces": [[]]}'),
      /empty snapshot/,
    ],
  ];
  for (const [name, make, pattern] of cases) it(name, () => expectCleanFailure(make(), pattern));

  it('unreadable file (skipped as root, who can read anything)', () => {
    if (process.getuid?.() === 0) return;
    const path = write('locked.pickle', example());
    chmodSync(path, 0);
    expectCleanFailure(path, /permission denied/);
  });

  it('keeps going after a bad file and still exits 2; --json reports the error in place', () => {
    const bad = write('bad2.pickle', 'not a pickle at all');
    const r = run('summary', '--json', bad, EXAMPLE);
    expect(r.status).toBe(2);
    const out = JSON.parse(r.stdout) as { files: { file: string; error?: string; devices?: unknown[] }[] };
    expect(out.files[0]!.error).toMatch(/^not a pickle: starts with 'n'/);
    expect(out.files[1]!.devices).toHaveLength(1);
    expect(r.stderr.trimEnd().split('\n')).toHaveLength(1);
  });
});

describe('memlens summary on good input', () => {
  it('prints the memory_summary table for the example', () => {
    const r = run('summary', EXAMPLE);
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/Requested memory/);
    expect(r.stdout).toMatch(/2,043 entries/);
    expect(r.stderr).toBe('');
  });

  it('reads the same snapshot gzipped (same figures)', () => {
    const gz = write('example.pickle.gz', gzipSync(readFileSync(EXAMPLE)));
    const a = JSON.parse(run('summary', '--json', EXAMPLE).stdout).files[0].devices;
    const b = JSON.parse(run('summary', '--json', gz).stdout).files[0].devices;
    expect(b).toEqual(a);
  });

  it('--device filters, and an absent device is an error', () => {
    expect(
      JSON.parse(run('summary', '--json', '--device', '0', EXAMPLE).stdout).files[0].devices,
    ).toHaveLength(1);
    const r = run('summary', '--device', '3', EXAMPLE);
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/has no device 3 \(devices: 0\)/);
  });
});

function hugeInt(): Uint8Array {
  const n = 1_000_000;
  const out = new Uint8Array(2 + 5 + n + 1);
  out.set([0x80, 2, 0x8b, n & 0xff, (n >> 8) & 0xff, (n >> 16) & 0xff, 0]);
  out.fill(1, 7, 7 + n);
  out[out.length - 1] = 0x2e;
  return out;
}

/** [[[[...]]]] nested `depth` times: EMPTY_LIST × depth, then APPEND × (depth − 1). */
function deepNesting(depth: number): Uint8Array {
  const out = new Uint8Array(2 + depth + (depth - 1) + 1);
  out.set([0x80, 2]);
  out.fill(0x5d, 2, 2 + depth);
  out.fill(0x61, 2 + depth, 2 + depth + depth - 1);
  out[out.length - 1] = 0x2e;
  return out;
}

describe('memlens peak', () => {
  it('names the code that held memory at the peak, in text and JSON', () => {
    const text = run('peak', '--top', '3', EXAMPLE);
    expect(text.status).toBe(0);
    expect(text.stdout).toMatch(
      /allocated memory peaked at 531 MiB \(requested bytes\) after trace entry 144 of 2,043/,
    );
    expect(text.stdout).toMatch(/swiglu\.py:10/);
    const json = JSON.parse(run('peak', '--json', '--at', '10', EXAMPLE).stdout);
    const dev = json.files[0].devices[0];
    expect(dev.after_entry).toBe(10);
    expect(dev.moment).toBe('entry');
    expect(dev.groups.length).toBeLessThanOrEqual(10);
    expect(dev.groups.reduce((n: number, g: { bytes: number }) => n + g.bytes, 0) + dev.other_bytes).toBe(
      dev.allocated_bytes,
    );
  });

  it('fails cleanly on a bad file like every command', () => {
    const bad = write('bad-peak.pickle', 'nope');
    const r = run('peak', bad);
    expect(r.status).toBe(2);
    expect(r.stderr.trimEnd().split('\n')).toHaveLength(1);
  });
});

describe('memlens peak --speedscope', () => {
  it('writes the live memory at the peak as a speedscope profile, bytes as weights', () => {
    const out = join(dir, 'peak.speedscope.json');
    const r = run('peak', '--json', '--speedscope', out, EXAMPLE);
    expect(r.status).toBe(0);
    const peak = JSON.parse(r.stdout).files[0].devices[0];
    const file = JSON.parse(readFileSync(out, 'utf8'));
    expect(file.$schema).toBe('https://www.speedscope.app/file-format-schema.json');
    const profile = file.profiles[0];
    expect(profile.unit).toBe('bytes');
    expect(profile.weights.reduce((a: number, b: number) => a + b, 0)).toBe(peak.allocated_bytes);
    expect(profile.samples.length).toBe(profile.weights.length);
    for (const sample of profile.samples) for (const i of sample) expect(file.shared.frames[i]).toBeDefined();
  });

  it('reports an unwritable output in one line and leaves nothing behind', () => {
    const out = join(dir, 'no-such-dir', 'p.json');
    const r = run('peak', '--speedscope', out, EXAMPLE);
    expect(r.status).toBe(2);
    expect(r.stderr.trimEnd().split('\n')).toHaveLength(1);
    expect(r.stderr).toMatch(/cannot write .*ENOENT/);
  });
});
