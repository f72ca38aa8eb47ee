import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { generateSnapshotBytes, type SynthOptions } from '../../../../scripts/synth/index.js';
import { planSlice } from '../../../../src/engine/analyses/slice/slice.js';
import type { SliceRequest } from '../../../../src/engine/analyses/slice/slice-window.js';
import { summarize } from '../../../../src/engine/analyses/summary/summary.js';
import { loadSnapshotBytes } from '../../../../src/engine/load/load.js';
import type { DeviceModel, Snapshot } from '../../../../src/engine/model/snapshot.js';
import { NODE_FLAGS } from '../../../../src/node/node-flags.js';
import { snapshotOf } from '../../../helpers/snapshot-of.js';

const CORPUS = join(import.meta.dirname, '..', '..', '..', '..', '..', 'shared', 'corpus');
const corpus = existsSync(CORPUS) ? readdirSync(CORPUS).filter((f) => f.endsWith('.pickle')) : [];
const CLI = join(import.meta.dirname, '..', '..', '..', '..', 'dist', 'cli', 'main.js');
const tmp = mkdtempSync(join(tmpdir(), 'memlens-slice-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

function sliced(s: Snapshot, req: SliceRequest, devices: DeviceModel[] = s.devices): Snapshot {
  const plan = planSlice(s, devices, req);
  return snapshotOf(plan.value, plan.protocol);
}

function frameText(s: Snapshot, stack: number): string {
  return s.stacks
    .frames(stack)
    .map((f) => `${f.filename}:${f.line}:${f.name}`)
    .join('|');
}

/** What memlens says about entries [a, b) of `d` equals what it says about the slice's device. */
function expectSameWindow(
  s: Snapshot,
  d: DeviceModel,
  a: number,
  b: number,
  t: Snapshot,
  e: DeviceModel,
): void {
  const where = `device ${d.device} ${a}:${b}`;
  expect(e.trace.length, where).toBe(b - a);
  // Whole columns at once: one expect per entry and column is too slow on 22k-entry files.
  const cols = (x: Snapshot, m: DeviceModel, from: number, to: number) => ({
    action: Array.from(m.trace.action.subarray(from, to), (c) => x.traceColumns.actionNames[c]),
    addr: Array.from(m.trace.addr.subarray(from, to)),
    size: Array.from(m.trace.size.subarray(from, to)),
    time: Array.from(m.trace.timeUs.subarray(from, to)),
    stream: Array.from(m.trace.stream.subarray(from, to), (c) => x.traceColumns.streams[c]),
    frames: Array.from(m.trace.stack.subarray(from, to), (id) => frameText(x, id)),
    allocated: Array.from(m.totals.allocated.subarray(from, to)),
    active: Array.from(m.totals.active.subarray(from, to)),
    reserved: Array.from(m.totals.reserved.subarray(from, to)),
  });
  const got = cols(t, e, 0, b - a);
  const want = cols(s, d, a, b);
  for (const k of Object.keys(want) as (keyof typeof want)[])
    expect(got[k], `${where} ${k}`).toEqual(want[k]);
  const before = a > 0 ? d.totals.allocated[a - 1]! : d.totals.start.allocated;
  expect(e.totals.start.allocated, `${where} allocated before the window`).toBe(before);
  let peak = before;
  for (let i = a; i < b; i++) peak = Math.max(peak, d.totals.allocated[i]!);
  expect(e.totals.peak.allocated, `${where} peak`).toBe(peak);
  expect(liveSet(t, e, b - a - 1), `${where} live set at the end`).toEqual(liveSet(s, d, b - 1));
}

function liveSet(s: Snapshot, d: DeviceModel, k: number): string[] {
  const a = d.allocations;
  return Array.from(
    d.live.aliveAfter(k),
    (id) => `${a.addr[id]} ${a.size[id]} ${frameText(s, a.stack[id]!)}`,
  ).sort();
}

function thirds(n: number): [number, number][] {
  return [
    [0, n],
    [Math.floor(n / 3), Math.floor((2 * n) / 3)],
    [Math.floor(n / 2), n],
    [0, Math.min(n, 7)],
  ];
}

describe.skipIf(corpus.length === 0)(
  'slice of a corpus file: same figures for the window, whole range = original',
  () => {
    for (const file of corpus) {
      it(file, () => {
        const s = loadSnapshotBytes(new Uint8Array(readFileSync(join(CORPUS, file))));
        const longest = Math.max(...s.devices.map((d) => d.trace.length));
        if (longest === 0) {
          expect(() => planSlice(s, s.devices, { by: 'entries', from: 0, to: 1 })).toThrow(
            /no trace entries/,
          );
          return;
        }
        for (const [a, b] of thirds(longest)) {
          const t = sliced(s, { by: 'entries', from: a, to: b });
          s.devices.forEach((d, i) => {
            const n = d.trace.length;
            expectSameWindow(s, d, Math.min(a, n), Math.min(b, n), t, t.devices[i]!);
          });
          // The whole range: the dump-time segments come back, so every summary figure does too.
          if (a === 0 && b === longest) expect(summarize(t).devices).toEqual(summarize(s).devices);
        }
      });
    }
  },
);

describe('slice of generated snapshots', () => {
  const scenarios: [string, SynthOptions][] = [
    ['two devices, two streams', { events: 3000, seed: 41, devices: 2, streams: 2 }],
    ['pending frees and a private pool', { events: 3000, seed: 42, pendingFrees: true, privatePool: true }],
    ['expandable segments', { events: 3000, seed: 43, expandableSegments: true }],
    [
      'expandable segments unmapped by empty_cache',
      { events: 20000, seed: 43, expandableSegments: true, emptyCacheEvery: 3 },
    ],
    ['ring buffer overflow', { events: 3000, seed: 44, ringBufferOverflow: true }],
    ['PyTorch 2.0 layout', { events: 2000, seed: 45, legacy: 'v2.0' }],
    ['an oom at the end', { events: 2000, seed: 46, oom: true }],
    ['protocol 2, no time_us', { events: 2000, seed: 47, protocol: 2, noTimeUs: true }],
  ];
  for (const [name, options] of scenarios) {
    it(name, () => {
      const { bytes, expected } = generateSnapshotBytes(options);
      const s = loadSnapshotBytes(bytes);
      const n = Math.max(...s.devices.map((d) => d.trace.length));
      for (const [a, b] of thirds(n)) {
        const t = sliced(s, { by: 'entries', from: a, to: b });
        s.devices.forEach((d, i) => {
          expectSameWindow(s, d, a, b, t, t.devices[i]!);
        });
        // One segment per contiguous mapped range of an expandable segment, as _snapshot() reports.
        const segs = [...t.tables.segments].sort((x, y) => x.address - y.address);
        const touching = segs.filter(
          (x, k) =>
            k > 0 &&
            x.expandable &&
            segs[k - 1]!.expandable &&
            segs[k - 1]!.address + segs[k - 1]!.totalSize === x.address,
        );
        expect(touching, `${name} ${a}:${b}`).toEqual([]);
      }
      // The whole range: the generator's planted figures, not memlens's reading of the original.
      const whole = summarize(sliced(s, { by: 'entries', from: 0, to: n }));
      expected.devices.forEach((exp, i) => {
        const got = whole.devices[i] as unknown as Record<string, unknown>;
        for (const [k, v] of Object.entries(exp)) expect(got[k], `${name} ${k}`).toEqual(v);
      });
      expect(s.protocol).toBe(options.protocol ?? 4);
    });
  }

  it('keeps the key set of the input era (2.0 history blocks, no frames on entries)', () => {
    const s = loadSnapshotBytes(generateSnapshotBytes({ events: 1000, seed: 48, legacy: 'v2.0' }).bytes);
    const t = sliced(s, { by: 'entries', from: 100, to: 600 });
    expect(t.tables.blockKeys).toEqual(s.tables.blockKeys);
    expect(t.tables.segmentKeys).toEqual(s.tables.segmentKeys);
    expect(Object.keys(t.rest)).toEqual(Object.keys(s.rest));
  });

  it('by time: every device keeps the entries inside the time window, annotations too', () => {
    const s = loadSnapshotBytes(generateSnapshotBytes({ events: 3000, seed: 49, devices: 2 }).bytes);
    // The devices' traces follow each other in time: the window spans the end of one and the start of the other.
    const [from, to] = [s.devices[0]!.trace.timeUs[1000]!, s.devices[1]!.trace.timeUs[2000]!];
    const t = sliced(s, { by: 'time', from, to });
    s.devices.forEach((d, i) => {
      const a = d.trace.timeUs.findIndex((x) => x >= from);
      const b = d.trace.timeUs.findIndex((x) => x >= to);
      expectSameWindow(s, d, a, b < 0 ? d.trace.length : b, t, t.devices[i]!);
    });
    expect(t.annotations.length).toBeGreaterThan(0);
    expect(t.annotations.length).toBeLessThan(s.annotations.length);
    expect(t.annotations.every((x) => x.timeUs >= from && x.timeUs < to)).toBe(true);
  });

  it('--device: only that device, the others keep an empty trace', () => {
    const s = loadSnapshotBytes(generateSnapshotBytes({ events: 2000, seed: 50, devices: 2 }).bytes);
    const t = sliced(s, { by: 'entries', from: 500, to: 1500 }, [s.devices[1]!]);
    expect(t.devices.map((d) => d.device)).toEqual([1]);
    expectSameWindow(s, s.devices[1]!, 500, 1500, t, t.devices[0]!);
  });

  it("host_traces (pinned host memory) keep the entries in the window's time span", () => {
    const entry = (action: string, addr: number, time: number) => ({
      action,
      addr,
      size: 4096,
      stream: 0,
      time_us: time,
    });
    const device = [1, 2, 3, 4].map((k) => entry(k % 2 ? 'alloc' : 'free_requested', 1 << 20, k * 10));
    const host = [5, 15, 25, 35].map((time) => entry('alloc', 4096 * time, time));
    const s = snapshotOf({ segments: [], device_traces: [device], host_traces: [host] });
    const plan = planSlice(s, s.devices, { by: 'entries', from: 1, to: 3 });
    const t = snapshotOf(plan.value);
    const kept = t.traceRows.get((t.rest.host_traces as unknown[][])[0]!)!;
    // Entries 1 and 2 (times 20, 30) span [20, 40), up to the next entry: host entries 25 and 35.
    expect(kept.count).toBe(2);
    expect(t.traceColumns.timeUs[kept.first]).toBe(25);
    expect(plan.notes.some((n) => n.includes('host_traces'))).toBe(true);
  });

  it('says which segment and block keys it cannot carry', () => {
    const base = 1 << 30;
    const value = {
      segments: [
        {
          device: 0,
          address: base,
          total_size: 2 << 20,
          stream: 0,
          future_key: 1,
          blocks: [{ address: base, size: 2 << 20, requested_size: 0, state: 'inactive', block_extra: 'x' }],
        },
      ],
      device_traces: [
        [
          { action: 'alloc', addr: base, size: 512, stream: 0 },
          { action: 'free_completed', addr: base, size: 512, stream: 0 },
        ],
      ],
    };
    const s = snapshotOf(value);
    const plan = planSlice(s, s.devices, { by: 'entries', from: 0, to: 1 });
    expect(plan.notes.join('\n')).toContain("segment key 'future_key', block key 'block_extra'");
  });

  it('refuses ranges no device reaches and files without a trace', () => {
    const s = loadSnapshotBytes(generateSnapshotBytes({ events: 500, seed: 51 }).bytes);
    const n = s.devices[0]!.trace.length;
    expect(() => planSlice(s, s.devices, { by: 'entries', from: 10, to: n + 1 })).toThrow(/out of bounds/);
    expect(() => planSlice(s, s.devices, { by: 'entries', from: n, to: Infinity })).toThrow(/out of bounds/);
    expect(() => planSlice(s, s.devices, { by: 'entries', from: 10, to: Infinity })).not.toThrow();
    expect(() => planSlice(s, s.devices, { by: 'entries', from: 20, to: 10 })).toThrow(/empty range/);
    expect(() => planSlice(s, s.devices, { by: 'time', from: 0, to: 1 })).toThrow(
      /no trace entry has time_us/,
    );
    const list = loadSnapshotBytes(generateSnapshotBytes({ events: 500, seed: 51, legacy: 'list' }).bytes);
    expect(() => planSlice(list, list.devices, { by: 'entries', from: 0, to: 1 })).toThrow(/bare list/);
  });
});

describe('memlens slice (built CLI)', () => {
  const run = (args: string[]) =>
    spawnSync(process.execPath, [...NODE_FLAGS, CLI, ...args], { encoding: 'utf8' });
  const input = join(tmp, 'in.pickle');
  writeFileSync(input, generateSnapshotBytes({ events: 4000, seed: 52 }).bytes);
  const entries = loadSnapshotBytes(new Uint8Array(readFileSync(input))).devices[0]!.trace.length;

  it('writes a pickle that memlens and Python both open', () => {
    const out = join(tmp, 'out.pickle');
    const r = run(['slice', input, '--range', '1000:3000', '-o', out, '--json']);
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    const report = JSON.parse(r.stdout) as { files: { output: string; devices: { entries: number }[] }[] };
    expect(report.files[0]!.devices[0]!.entries).toBe(2000);
    const t = loadSnapshotBytes(new Uint8Array(readFileSync(out)));
    expect(t.devices[0]!.trace.length).toBe(2000);
    const py = spawnSync(
      'python3',
      [
        '-c',
        'import pickle,sys; d=pickle.load(open(sys.argv[1],"rb")); print(len(d["device_traces"][0]))',
        out,
      ],
      {
        encoding: 'utf8',
      },
    );
    if (py.error === undefined) {
      expect(py.stderr).toBe('');
      expect(py.stdout.trim()).toBe('2000');
    }
  });

  it.skipIf(corpus.length === 0)(
    'the independent Python figures of a corpus slice match memlens on it',
    () => {
      const out = join(tmp, 'corpus-slice.pickle');
      const file = join(CORPUS, 'notHanmin_assignment2__memory_snapshot__996025b.pickle');
      expect(run(['slice', file, '--range', '5000:12000', '-o', out]).status).toBe(0);
      const script = join(import.meta.dirname, '..', '..', '..', '..', 'scripts', 'expected_figures.py');
      const py = spawnSync('python3', [script, out], { encoding: 'utf8' });
      if (py.error !== undefined) return; // no python3 on this machine
      expect(py.status, py.stderr).toBe(0);
      const figures = JSON.parse(py.stdout) as { devices: Record<string, unknown>[] };
      expect(figures.devices.length).toBe(1);
      const ours = summarize(loadSnapshotBytes(new Uint8Array(readFileSync(out)))).devices;
      figures.devices.forEach((exp, i) => {
        const got = ours[i] as unknown as Record<string, unknown>;
        for (const [k, v] of Object.entries(exp)) expect(got[k], k).toEqual(v);
      });
    },
  );

  // What Python reads back: same data as the original, dict key order aside (frame dicts and the
  // place of `frames` in a segment vary inside one file; the model does not keep them).
  const SAME_DATA = `
import pickle, sys
def norm(x):
    if isinstance(x, dict):
        return sorted((k, norm(v)) for k, v in x.items())
    if isinstance(x, (list, tuple)):
        return (type(x).__name__, [norm(v) for v in x])
    return (type(x).__name__, x)
a, b = (pickle.load(open(p, 'rb')) for p in sys.argv[1:3])
print('same' if norm(a) == norm(b) else 'different')
`;
  it.skipIf(corpus.length === 0)(
    'a whole-range slice is the original to Python (2.0, multi-rank, late 2025 files)',
    () => {
      for (const name of [
        'Yiyi_LLM-inference__oom_snapshot__61261a2.pickle',
        'THUDM_slime__scripts_0804_3_shapshot_init_model__8ffda8b.pickle',
        'MAGMA27_assignment2__memory_snapshot.pickle',
      ]) {
        const out = join(tmp, `whole-${name}`);
        expect(run(['slice', join(CORPUS, name), '--range', '0:', '-o', out]).status, name).toBe(0);
        const py = spawnSync('python3', ['-c', SAME_DATA, join(CORPUS, name), out], { encoding: 'utf8' });
        if (py.error !== undefined) return; // no python3 on this machine
        expect(py.stdout.trim(), `${name}: ${py.stderr}`).toBe('same');
      }
    },
  );

  it('bad input: one line, exit 2, no output file', () => {
    const bad = join(tmp, 'bad.pickle');
    writeFileSync(bad, readFileSync(input).subarray(0, 5000));
    const out = join(tmp, 'never.pickle');
    const r = run(['slice', bad, '--range', '0:10', '-o', out]);
    expect(r.status).toBe(2);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toContain(bad);
    expect(existsSync(out)).toBe(false);
    expect(readdirSync(tmp).filter((f) => f.includes('.tmp'))).toEqual([]);
  });

  it('a range out of bounds: a clear error and no output file', () => {
    const out = join(tmp, 'never2.pickle');
    const r = run(['slice', input, '--range', '3000:9000', '-o', out]);
    expect(r.status).toBe(2);
    expect(r.stderr).toContain(`range 3000:9000 is out of bounds: the longest trace has ${entries} entries`);
    expect(existsSync(out)).toBe(false);
  });

  it('--time-range and --device through the CLI', () => {
    const out = join(tmp, 'by-time.pickle');
    const s = loadSnapshotBytes(new Uint8Array(readFileSync(input)));
    const t = s.devices[0]!.trace.timeUs;
    const [from, to] = [t[500]!, t[1500]!];
    const r = run(['slice', input, '--time-range', `${from}:${to}`, '--device', '0', '-o', out, '--json']);
    expect(r.status, r.stderr).toBe(0);
    const sliceOf = loadSnapshotBytes(new Uint8Array(readFileSync(out))).devices[0]!;
    const a = t.findIndex((x) => x >= from);
    const b = t.findIndex((x) => x >= to);
    expect(sliceOf.trace.length).toBe(b - a);
    expect(sliceOf.trace.timeUs[0]).toBe(t[a]);
    expect(run(['slice', input, '--time-range', '1:2', '-o', out]).stderr).toMatch(
      /no trace entry has time_us in 1:2/,
    );
  });

  it('needs exactly one of --range and --time-range', () => {
    const r = run(['slice', input, '-o', join(tmp, 'x.pickle')]);
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/exactly one of --range/);
  });
});
