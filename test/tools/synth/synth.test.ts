import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import {
  computeExpected,
  type DeviceFigures,
  generateSnapshotBytes,
  generateSnapshotJson,
  type WriteOptions,
  writeSnapshot,
} from '../../../scripts/synth/index.js';

const hasPython = spawnSync('python3', ['--version']).status === 0;
const FIGURES_SCRIPT = fileURLToPath(new URL('../../../scripts/expected_figures.py', import.meta.url));
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'memlens-synth-'));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

/** Option sets covering every feature, small enough for a test run. */
const VARIANTS: [string, WriteOptions][] = [
  ['default', { events: 12000 }],
  ['two devices, three streams', { events: 6000, devices: 2, streams: 3, seed: 2 }],
  ['oom', { events: 6000, oom: true, seed: 3 }],
  ['expandable + oom + streams', { events: 8000, expandableSegments: true, oom: true, streams: 2, seed: 4 }],
  ['ring buffer overflow', { events: 6000, ringBufferOverflow: true, seed: 5 }],
  ['pending frees', { events: 6000, pendingFrees: true, streams: 1, seed: 6 }],
  ['private pool', { events: 6000, privatePool: true, seed: 7 }],
  ['legacy list', { events: 4000, legacy: 'list', seed: 8 }],
  ['legacy v2.0', { events: 4000, legacy: 'v2.0', seed: 9 }],
  ['no time_us, protocol 2', { events: 4000, noTimeUs: true, protocol: 2, seed: 10 }],
  ['protocol 5, shared stacks', { events: 4000, protocol: 5, shareIdenticalStacks: true, seed: 11 }],
  [
    'everything',
    {
      events: 9000,
      devices: 2,
      streams: 2,
      oom: true,
      pendingFrees: true,
      privatePool: true,
      ringBufferOverflow: true,
      expandableSegments: true,
      seed: 12,
    },
  ],
];

// ---- an independent reading of shared/corpus/README.md, over the JSON form ----

type Json = Record<string, unknown>;
type Seg = {
  device: number;
  address: number;
  total_size: number;
  segment_type: string;
  is_expandable?: boolean;
  blocks: { size: number; requested_size: number; state: string }[];
};
type Entry = { action: string; size: number; time_us?: number };

function figuresFromJson(snapshot: unknown): Omit<DeviceFigures, 'pools'>[] {
  const top = (Array.isArray(snapshot) ? { segments: snapshot, device_traces: [] } : snapshot) as Json;
  const segments = top.segments as Seg[];
  const traces = (top.device_traces ?? []) as Entry[][];
  const devices = new Set(segments.map((s) => s.device));
  for (const [i, t] of traces.entries()) if (t.length > 0) devices.add(i);
  return [...devices]
    .sort((a, b) => a - b)
    .map((device) =>
      deviceFromJson(
        device,
        segments.filter((s) => s.device === device),
        traces[device] ?? [],
      ),
    );
}

function deviceFromJson(device: number, segs: Seg[], trace: Entry[]): Omit<DeviceFigures, 'pools'> {
  const blocks = segs.flatMap((s) => s.blocks);
  const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);
  const active = blocks.filter((b) => b.state !== 'inactive');
  const allocatedReq = sum(blocks.filter((b) => b.state === 'active_allocated').map((b) => b.requested_size));
  const reserved = sum(segs.map((s) => s.total_size));
  let alloc = allocatedReq;
  let res = reserved;
  let peakAlloc = alloc;
  let peakRes = res;
  for (let i = trace.length - 1; i >= 0; i--) {
    const e = trace[i]!;
    if (e.action === 'alloc') alloc -= e.size;
    if (e.action === 'free_requested') alloc += e.size;
    if (e.action === 'segment_alloc' || e.action === 'segment_map') res -= e.size;
    if (e.action === 'segment_free' || e.action === 'segment_unmap') res += e.size;
    peakAlloc = Math.max(peakAlloc, alloc);
    peakRes = Math.max(peakRes, res);
  }
  const actions: Record<string, number> = {};
  for (const e of trace) actions[e.action] = (actions[e.action] ?? 0) + 1;
  const times = trace.filter((e) => e.time_us !== undefined).map((e) => e.time_us!);
  return {
    device,
    segments: segs.length,
    expandable_segments: segs.filter((s) => s.is_expandable).length,
    blocks: blocks.length,
    reserved_bytes: reserved,
    allocated_bytes: sum(blocks.filter((b) => b.state === 'active_allocated').map((b) => b.size)),
    active_bytes: sum(active.map((b) => b.size)),
    requested_bytes: sum(active.map((b) => b.requested_size)),
    inactive_split_bytes: sum(
      segs
        .filter((s) => !s.is_expandable && s.blocks.length > 1)
        .flatMap((s) => s.blocks.filter((b) => b.state === 'inactive').map((b) => b.size)),
    ),
    largest_inactive_block: Math.max(0, ...blocks.filter((b) => b.state === 'inactive').map((b) => b.size)),
    trace_entries: trace.length,
    trace_actions: actions,
    ooms: actions.oom ?? 0,
    trace_span_us: times.length > 0 ? times[times.length - 1]! - times[0]! : 0,
    trace_start_allocated_bytes: alloc,
    trace_peak_allocated_bytes: peakAlloc,
    trace_start_reserved_bytes: res,
    trace_peak_reserved_bytes: peakRes,
  };
}

function withoutPools(figures: DeviceFigures[]): Omit<DeviceFigures, 'pools'>[] {
  return figures.map(({ pools: _, ...rest }) => rest);
}

describe('synthetic snapshots (JSON form, no python)', () => {
  for (const [name, options] of VARIANTS) {
    it(`expected figures match the written snapshot: ${name}`, () => {
      const { json, expected } = generateSnapshotJson({
        ...options,
        events: Math.min(options.events!, 3000),
      });
      expect(figuresFromJson(JSON.parse(json))).toEqual(withoutPools(expected.devices));
    });
  }

  it('is deterministic in the seed', () => {
    const a = generateSnapshotBytes({ events: 3000, seed: 42 }).bytes;
    const b = generateSnapshotBytes({ events: 3000, seed: 42 }).bytes;
    const c = generateSnapshotBytes({ events: 3000, seed: 43 }).bytes;
    expect(Buffer.compare(a, b)).toBe(0);
    expect(Buffer.compare(a, c)).not.toBe(0);
  });

  it('streams in bounded chunks that add up to the in-memory result', () => {
    const chunks: Uint8Array[] = [];
    const r = writeSnapshot({ events: 30000, seed: 5 }, (c) => chunks.push(c));
    expect(Math.max(...chunks.map((c) => c.length))).toBeLessThan(1.5 * 2 ** 20);
    expect(chunks.reduce((n, c) => n + c.length, 0)).toBe(r.bytesWritten);
    expect(
      Buffer.compare(Buffer.concat(chunks), generateSnapshotBytes({ events: 30000, seed: 5 }).bytes),
    ).toBe(0);
  });

  it('hits a size target within 10%', () => {
    const r = generateSnapshotBytes({ targetBytes: 3e6, seed: 9 });
    expect(r.bytes.length).toBeGreaterThan(2.7e6);
    expect(r.bytes.length).toBeLessThan(3.3e6);
    expect(r.bytesWritten / r.expected.devices[0]!.trace_entries).toBeGreaterThan(80);
    expect(r.bytesWritten / r.expected.devices[0]!.trace_entries).toBeLessThan(200);
  });

  it('computeExpected agrees with the figures returned when writing', () => {
    const options = { events: 4000, oom: true, ringBufferOverflow: true, seed: 3 };
    expect(computeExpected(options)).toEqual(generateSnapshotBytes(options).expected);
  });

  it('gives each option its visible effect', () => {
    const figs = (o: WriteOptions) => generateSnapshotBytes({ events: 4000, ...o }).expected.devices;
    expect(figs({ oom: true })[0]!.ooms).toBe(1);
    const exp = figs({ expandableSegments: true })[0]!;
    expect(exp.expandable_segments).toBe(exp.segments);
    expect(exp.trace_actions.segment_map).toBeGreaterThan(0);
    const pend = figs({ pendingFrees: true })[0]!;
    expect(pend.active_bytes).toBeGreaterThan(pend.allocated_bytes);
    const over = figs({ ringBufferOverflow: true })[0]!;
    expect(over.trace_entries).toBe(4000);
    expect(over.trace_start_allocated_bytes).toBeGreaterThan(0);
    expect(figs({ devices: 3 }).map((d) => d.device)).toEqual([0, 1, 2]);
    expect(figs({ legacy: 'list' })[0]!.trace_entries).toBe(0);
  });

  it('writes the late-2025 key orders, shapes and stack depths', () => {
    const snap = JSON.parse(
      generateSnapshotJson({ events: 3000, oom: true, privatePool: true, streams: 2 }).json,
    );
    expect(Object.keys(snap)).toEqual([
      'segments',
      'device_traces',
      'allocator_settings',
      'external_annotations',
    ]);
    const trace = snap.device_traces[0] as Json[];
    const alloc = trace.find((e) => e.action === 'alloc')!;
    expect(Object.keys(alloc)).toEqual([
      'action',
      'addr',
      'size',
      'stream',
      'time_us',
      'compile_context',
      'user_metadata',
      'frames',
    ]);
    const oom = trace[trace.length - 1]!;
    expect(Object.keys(oom).slice(0, 3)).toEqual(['action', 'device_free', 'size']);
    for (const e of trace) {
      const depth = (e.frames as unknown[]).length;
      expect(depth).toBeGreaterThanOrEqual(20);
      expect(depth).toBeLessThanOrEqual(40);
    }
    expect(Object.keys((trace[0]!.frames as Json[])[0]!)).toEqual(['name', 'filename', 'line']);
    const times = trace.map((e) => e.time_us as number);
    expect(times).toEqual([...times].sort((a, b) => a - b));
    const seg = snap.segments[0];
    expect(Object.keys(seg)).toEqual([
      'device',
      'address',
      'total_size',
      'allocated_size',
      'active_size',
      'requested_size',
      'stream',
      'segment_type',
      'segment_pool_id',
      'is_expandable',
      'frames',
      'blocks',
    ]);
    expect(Object.keys(seg.blocks[0])).toEqual(['address', 'size', 'requested_size', 'state', 'frames']);
    expect(snap.segments.some((s: Json) => (s.segment_pool_id as number[])[1] === 1)).toBe(true);
    expect(snap.segments.some((s: Json) => (s.stream as number) > 2 ** 40)).toBe(true);
    expect(snap.external_annotations[0]).toMatchObject({ stage: 'START', name: 'ProfilerStep#0', device: 0 });
  });

  it('writes the PyTorch 2.0 and bare-list layouts', () => {
    const v20 = JSON.parse(generateSnapshotJson({ events: 2000, legacy: 'v2.0' }).json);
    expect(Object.keys(v20)).toEqual(['segments', 'device_traces']);
    expect(Object.keys(v20.device_traces[0][0])).toEqual(['action', 'addr', 'size', 'stream']);
    expect(Object.keys(v20.segments[0].blocks[0])).toEqual(['size', 'requested_size', 'state', 'history']);
    const list = JSON.parse(generateSnapshotJson({ events: 2000, legacy: 'list' }).json);
    expect(Array.isArray(list)).toBe(true);
  });

  it('refuses options that contradict each other', () => {
    expect(() => generateSnapshotBytes({ devices: 0 })).toThrow(RangeError);
    expect(() => generateSnapshotBytes({ legacy: 'v2.0', expandableSegments: true })).toThrow(/expandable/);
  });
});

/**
 * Replays each trace forward and checks it against the final segments: every live allocation,
 * pending free, cudaMalloc'd segment and mapped page, plus blocks tiling their segments, frames
 * lists shared between a live block and its alloc event, frames pickled once each.
 */
const PY_REPLAY = `
import sys, json, pickle
snap = pickle.load(open(sys.argv[1], 'rb'))
errors = []
def err(msg):
    if len(errors) < 20: errors.append(msg)
segs = snap if isinstance(snap, list) else snap['segments']
traces = [] if isinstance(snap, list) else snap['device_traces']
settings = {} if isinstance(snap, list) else snap.get('allocator_settings', {})
overflow = settings.get('trace_alloc_overflowed', False)
PAGE = 2 << 20
last = {}
for s in segs:
    a = s['address']
    if s['device'] in last and a < last[s['device']]: err('segments not sorted')
    last[s['device']] = a + s['total_size']
    for b in s['blocks']:
        if b.get('address', a) != a: err('block address gap in segment %x' % s['address'])
        a += b['size']
    if a != s['address'] + s['total_size']: err('blocks do not tile segment %x' % s['address'])
    act = [b for b in s['blocks'] if b['state'] != 'inactive']
    if s['allocated_size'] != sum(b['size'] for b in act if b['state'] == 'active_allocated'): err('allocated_size')
    if s['active_size'] != sum(b['size'] for b in act): err('active_size')
    if s['requested_size'] != sum(b['requested_size'] for b in act): err('requested_size')
def blocks_of(dev):
    for s in segs:
        if s['device'] != dev: continue
        a = s['address']
        for b in s['blocks']:
            yield s, b.get('address', a), b
            a += b['size']
frame_ids, frame_keys = set(), set()
for dev, trace in enumerate(traces):
    live, pending, seg_live, mapped, alloc_entry = {}, set(), {}, set(), {}
    prev_t = None
    for e in trace:
        act = e['action']
        if 'time_us' in e:
            if prev_t is not None and e['time_us'] < prev_t: err('time goes back')
            prev_t = e['time_us']
        for f in e.get('frames', []):
            frame_ids.add(id(f)); frame_keys.add((f['name'], f['filename'], f['line']))
        if act == 'oom':
            if 'addr' in e or 'device_free' not in e: err('oom entry shape')
            continue
        a, n = e['addr'], e['size']
        if act == 'alloc':
            if a in live or a in pending: err('alloc over a live block at %x' % a)
            live[a] = n; alloc_entry[a] = e
        elif act == 'free_requested':
            if a in live:
                if live.pop(a) != n: err('free size differs at %x' % a)
                pending.add(a)
            elif not overflow: err('free of unknown block %x' % a)
        elif act == 'free_completed':
            if a in pending: pending.discard(a)
            elif not overflow: err('free_completed without request at %x' % a)
        elif act == 'segment_alloc':
            if a in seg_live: err('segment twice at %x' % a)
            seg_live[a] = n
        elif act == 'segment_free':
            if a in seg_live:
                if seg_live.pop(a) != n: err('segment_free size at %x' % a)
            elif not overflow: err('segment_free of unknown %x' % a)
        elif act in ('segment_map', 'segment_unmap'):
            pages = set(range(a, a + n, PAGE))
            if act == 'segment_map':
                if pages & mapped: err('map over mapped pages at %x' % a)
                mapped |= pages
            else:
                if not overflow and not pages <= mapped: err('unmap of unmapped pages at %x' % a)
                mapped -= pages
    final_alloc = {a: b['requested_size'] for s, a, b in blocks_of(dev) if b['state'] == 'active_allocated'}
    final_pending = {a for s, a, b in blocks_of(dev) if b['state'] == 'active_pending_free'}
    final_segs = {s['address']: s['total_size'] for s in segs if s['device'] == dev and not s.get('is_expandable')}
    final_pages = {p for s in segs if s['device'] == dev and s.get('is_expandable') for p in range(s['address'], s['address'] + s['total_size'], PAGE)}
    if overflow:
        if any(final_alloc.get(a) != n for a, n in live.items()): err('live allocation missing at dump')
        if not pending <= final_pending: err('pending free missing at dump')
        if any(final_segs.get(a) != n for a, n in seg_live.items()): err('segment missing at dump')
    else:
        if live != final_alloc: err('device %d: live allocations differ from active_allocated blocks' % dev)
        if pending != final_pending: err('device %d: pending frees differ' % dev)
        if seg_live != final_segs: err('device %d: segments differ from segment_alloc/free' % dev)
        if mapped != final_pages: err('device %d: mapped pages differ' % dev)
    for s, a, b in blocks_of(dev):
        e = alloc_entry.get(a)
        if b['state'] == 'active_allocated' and e is not None and live.get(a) is not None and 'frames' in b:
            if b['frames'] is not e['frames']: err('block %x does not share its alloc frames list' % a)
if len(frame_ids) != len(frame_keys): err('frames not shared: %d objects for %d frames' % (len(frame_ids), len(frame_keys)))
again = pickle.dumps(snap, protocol=open(sys.argv[1], 'rb').read()[1])
print(json.dumps({'errors': errors, 'repickle_identical': again == open(sys.argv[1], 'rb').read(), 'frames': len(frame_keys)}))
`;

describe.skipIf(!hasPython)('synthetic snapshots against CPython', () => {
  for (const [name, options] of VARIANTS) {
    it(`loads with pickle, replays consistently, matches expected_figures.py: ${name}`, () => {
      const r = generateSnapshotBytes(options);
      const file = path.join(tmp, `${name.replace(/\W+/g, '_')}.pickle`);
      const expectedFile = `${file}.json`;
      fs.writeFileSync(file, r.bytes);
      fs.writeFileSync(
        expectedFile,
        JSON.stringify({ devices: r.expected.devices, file: path.basename(file) }),
      );

      const cmp = spawnSync('python3', [FIGURES_SCRIPT, file, '--compare', expectedFile]);
      expect(cmp.stdout.toString() + cmp.stderr.toString()).toBe('');
      expect(cmp.status).toBe(0);

      const replay = spawnSync('python3', ['-c', PY_REPLAY, file]);
      expect(replay.stderr.toString()).toBe('');
      const out = JSON.parse(replay.stdout.toString());
      expect(out.errors).toEqual([]);
      // CPython pickling the loaded value again writes the very same bytes: same opcodes, frames,
      // memo indices and identity structure as a real `_dump_snapshot`.
      expect(out.repickle_identical).toBe(true);
    });
  }

  it('the replay check notices an inconsistent snapshot', () => {
    const r = generateSnapshotBytes({ events: 3000, seed: 1 });
    const file = path.join(tmp, 'broken.pickle');
    fs.writeFileSync(file, r.bytes);
    const breakIt = `import pickle,sys; s=pickle.load(open(sys.argv[1],'rb')); t=s['device_traces'][0]; i=next(i for i,e in enumerate(t) if e['action']=='free_requested'); del t[i]; pickle.dump(s, open(sys.argv[1],'wb'))`;
    expect(spawnSync('python3', ['-c', breakIt, file]).status).toBe(0);
    const out = JSON.parse(spawnSync('python3', ['-c', PY_REPLAY, file]).stdout.toString());
    expect(out.errors.length).toBeGreaterThan(0);
  });
});
