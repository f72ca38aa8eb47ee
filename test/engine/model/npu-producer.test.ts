/**
 * torch_npu (Ascend NPU) files, made by the generator that follows torch_npu's source
 * (scripts/synth/npu.ts): what memlens says of them must be the NPU's truth, not CUDA's.
 */
import { describe, expect, it } from 'vitest';
import { generateSnapshotBytes, generateSnapshotJson } from '../../../scripts/synth/index.js';
import { type NpuOptions, npuSnapshotBytes } from '../../../scripts/synth/npu.js';
import { diagnose } from '../../../src/engine/analyses/diagnosis/diagnosis.js';
import { noOomEntryText, oomReports } from '../../../src/engine/analyses/oom/oom.js';
import { inProducerWords, jsonInProducerWords } from '../../../src/engine/analyses/producer/wording.js';
import { planSlice } from '../../../src/engine/analyses/slice/slice.js';
import { summarize } from '../../../src/engine/analyses/summary/summary.js';
import { frameKind, HIDDEN_KINDS } from '../../../src/engine/derived/frames/frame-kinds.js';
import { userFirstStack } from '../../../src/engine/derived/frames/user-frames.js';
import { dumpFreeState } from '../../../src/engine/derived/state/free-blocks.js';
import { hasHistory } from '../../../src/engine/derived/state/has-history.js';
import { loadSnapshotBytes } from '../../../src/engine/load/load.js';
import { npuRequestPad } from '../../../src/engine/model/request-pad.js';
import { BlockState, type SegmentTables } from '../../../src/engine/model/segments.js';
import type { Snapshot } from '../../../src/engine/model/snapshot.js';
import { simulate } from '../../../src/engine/simulate/simulate.js';
import { poolStateAfter } from '../../../src/engine/views/pools/pool-state.js';
import { snapshotOf } from '../../helpers/snapshot-of.js';

const MiB = 2 ** 20;

function npu(o: NpuOptions = {}) {
  const { bytes, facts } = npuSnapshotBytes(o);
  return { s: loadSnapshotBytes(bytes), facts };
}

function allWarnings(s: Snapshot): string[] {
  const sum = summarize(s);
  return [...sum.warnings, ...sum.devices.flatMap((d) => d.warnings)];
}

describe('torch_npu: which producer wrote the file', () => {
  it('an NPU file is told by its workspace entries, frames and pointer streams, and says so', () => {
    const { s, facts } = npu();
    expect(s.producer.kind).toBe('torch_npu');
    expect(s.producer.signals.join('; ')).toMatch(/1 workspace_snapshot trace entry/);
    expect(s.producer.signals.join('; ')).toMatch(/libtorch_npu\.so/);
    expect(s.producer.signals.join('; ')).toContain(`0x${facts.stream.toString(16)}`);
  });

  it('the request pad is read from the blocks: 32, 0 (Ascend950, CANN >= 9.1), or assumed', () => {
    expect(npu().s.producer.pad).toEqual({ bytes: 32, from: 'a 1048576 B request holds a 1049088 B block' });
    const zero = npu({ pad: 0 }).s.producer.pad!;
    expect(zero.bytes).toBe(0);
    expect(zero.from).toMatch(/^a \d+ B request holds a \d+ B block, less than 32 B of pad allows$/);
    // 100 B in a 512 B block, 600 B in 1,024: either pad gives these.
    const blocks = { length: 2, size: [512, 1024], requestedSize: [100, 600], state: [0, 0] };
    const tables = { blockKeys: ['size', 'requested_size'], blocks } as unknown as SegmentTables;
    expect(npuRequestPad(tables).from).toMatch(/^assumed: no block tells 32 from 0/);
    expect(npuRequestPad({ ...tables, blockKeys: ['size'] }).from).toMatch(/no requested_size/);
  });

  it("a small-pool block holding a request's 32-byte pad is torch_npu's, frames or not", () => {
    expect(npu({ version: '6.0' }).s.producer.signals).toContain(
      'a 4096 B request in a 4608 B small-pool block (a 32-byte pad)',
    );
  });

  it('torch_npu 6.0 (no workspace) is told by its frames', () => {
    const { s } = npu({ version: '6.0' });
    expect(s.producer.kind).toBe('torch_npu');
    expect(s.producer.signals[0]).toMatch(/torch_npu frames/);
  });

  it("a PyTorch CUDA file stays PyTorch's", () => {
    const s = loadSnapshotBytes(generateSnapshotBytes({ events: 2000, seed: 5, streams: 1 }).bytes);
    expect(s.producer).toEqual({ kind: 'pytorch', signals: [] });
  });
});

describe('torch_npu: the workspace allocator', () => {
  it('its entries and always-inactive block raise no warning and count as workspace, not tensors', () => {
    const { s, facts } = npu();
    expect(s.violations).toEqual([]);
    expect(allWarnings(s)).toEqual([]);
    const d = s.devices[0]!;
    const sum = summarize(s).devices[0]!;
    expect(sum.workspace_bytes).toBe(facts.workspace.size);
    // No allocation of the workspace's size without a stack: every live allocation has one.
    for (let id = 0; id < d.allocations.count; id++)
      expect(d.allocations.stack[id]).toBeGreaterThanOrEqual(0);
    // The allocated curve ends at the dump's tensors: the workspace is in reserved only.
    expect(d.totals.end.allocated).toBe(sum.requested_bytes);
    expect(d.totals.start.reserved).toBe(facts.workspace.size);
    // Entries are counted as the file writes them.
    expect(sum.trace_actions).toMatchObject({ workspace_snapshot: 1, segment_alloc: 5, alloc: 32 });
  });

  it('a trace of only workspace markers is no history: nothing is said to be clear', () => {
    const { s } = npu({ traced: false });
    const d = s.devices[0]!;
    expect(d.trace.length).toBe(3);
    expect(hasHistory(d)).toBe(false);
    expect(diagnose(s, d).checked).toEqual([]);
  });

  it('the workspace block is never a free block the caching allocator could hand out', () => {
    const { s, facts } = npu();
    const d = s.devices[0]!;
    const free = dumpFreeState(s, d);
    expect(free.groups.some((g) => g.largest_free_block === facts.workspace.size)).toBe(false);
    const ws = s.tables.segments.find((g) => g.address === facts.workspace.addr)!;
    expect(s.tables.blocks.state[ws.firstBlock]).toBe(BlockState.workspace);
  });
});

describe('torch_npu: a slice', () => {
  it('writes the workspace entries back as torch_npu wrote them', () => {
    const { s } = npu();
    const plan = planSlice(s, s.devices, { by: 'entries', from: 0, to: 20 });
    const back = snapshotOf(plan.value, plan.protocol);
    expect(summarize(back).devices[0]!.trace_actions).toMatchObject({
      workspace_snapshot: 1,
      segment_alloc: 3,
    });
    expect(back.workspace.blocks).toBe(1);
  });
});

describe('torch_npu: the pool state', () => {
  it('shows the workspace segment as workspace, with no free space in it', () => {
    const { s, facts } = npu();
    const d = s.devices[0]!;
    const state = poolStateAfter(s, d, d.trace.length - 1);
    const ws = state.segments.find((g) => g.address === facts.workspace.addr)!;
    expect(ws).toMatchObject({ workspace: true, gap_bytes: 0, gap_count: 0, max_gap: 0 });
    expect(state.segments.filter((g) => g.workspace)).toHaveLength(1);
  });
});

describe('torch_npu: words and versions', () => {
  it('no PyTorch version is read from fields torch_npu never writes; devices are npu:N', () => {
    const { s } = npu({ device: 1 });
    const sum = summarize(s);
    expect(sum.warnings.join(' ')).not.toMatch(/older than|PyTorch [<≥]/);
    expect(sum.devices.map((d) => d.label)).toEqual(['npu:1']);
  });

  it('CUDA words become the NPU words; options to copy keep their form', () => {
    const p = npu().s.producer;
    expect(
      inProducerWords(
        'cudaMalloc retries on the GPU of device 1 (nvidia-smi, NCCL); the CUDA context; memlens simulate --device 1',
        p,
      ),
    ).toBe(
      'aclrtMalloc retries on the NPU of npu:1 (npu-smi info, HCCL); the CANN runtime context; memlens simulate --device 1',
    );
  });
});

describe('torch_npu: out of memory', () => {
  it('a state-only dump (OOM_SNAPSHOT_ENABLE=2) is judged from its one oom entry, on its stream', () => {
    const { s, facts } = npu({ oom: 'state-only' });
    const d = s.devices[0]!;
    expect(d.trace.length).toBe(4); // the workspace marker's three entries, then the oom
    const [r] = oomReports(s, d, 512 * MiB);
    expect(r!.stream).toBe(facts.stream);
    expect(r!.verdict).toBe('exhaustion');
    expect(userFirstStack(s.stacks.frames(d.trace.stack[3]!)).frames[0]!.name).toBe('forward');
  });

  it('a CANN OOM with no oom entry is not called "no OOM"', () => {
    const { s } = npu({ oom: 'cann' });
    const d = s.devices[0]!;
    expect(oomReports(s, d)).toEqual([]);
    const text = noOomEntryText(s, d);
    expect(text).toMatch(/^no oom entry in the trace's 53 entries; .* CANN leaves none/);
    expect(diagnose(s, d).checked.join(' ')).not.toMatch(/no OOM/);
  });

  it('--request on a file with one pointer stream is judged on that stream (would fit in the cache)', () => {
    const { s, facts } = npu({ oom: 'cann' });
    const d = s.devices[0]!;
    // 100 MiB leaves 30 MiB unreserved; only the cached 42 MiB block serves 35 MiB.
    const [r] = oomReports(s, d, 100 * MiB, 35 * MiB);
    expect(r!.stream).toBe(facts.stream);
    expect(r!.largest_free_block).toBe(facts.largestFree);
    expect(r!.verdict).toBe('would fit');
    // + 32 bytes, rounded to 512: the request as torch_npu's allocator looks for it.
    expect(r!.requested_bytes).toBe(35 * MiB + 512);
    // And one larger than that block: the cache cannot serve it, the unreserved memory cannot either.
    expect(oomReports(s, d, 100 * MiB, 60 * MiB)[0]!.verdict).toBe('fragmentation');
  });
});

describe('torch_npu: the replay', () => {
  for (const o of [
    {},
    { expandable: true },
    { oom: 'allocator' as const },
    { version: '6.0' as const },
    { pad: 0 },
  ]) {
    it(`reproduces every segment event and final segment exactly (${JSON.stringify(o)})`, () => {
      const { s, facts } = npu(o);
      const [dev] = simulate(s, s.devices, {}).devices;
      const f = dev!.fidelity;
      expect(f.recorded_segment_events).toBe(facts.segmentEvents.length);
      expect(f.matched_segment_events).toBe(f.recorded_segment_events);
      expect(f.simulated_segment_events).toBe(f.recorded_segment_events);
      expect(f.max_reserved_deviation_bytes).toBe(0);
      expect(f.matched_final_segments).toBe(f.recorded_final_segments);
    });
  }

  it("a segment from before a wrapped ring buffer, empty and gone at the dump, is on the file's stream", () => {
    // The last 17 entries: the trace begins after step 0, whose cached 42 MiB segment step 1 reuses.
    const { s, facts } = npu({ maxEntries: 17 });
    expect(facts.segmentEvents.map((e) => e[0])).toEqual(['segment_free', 'segment_alloc']);
    const [dev] = simulate(s, s.devices, {}).devices;
    expect(dev!.fidelity.matched_segment_events).toBe(2);
    expect(dev!.fidelity.max_reserved_deviation_bytes).toBe(0);
  });

  it('expandable segments are inferred from segment_map entries when no settings are written', () => {
    const { s } = npu({ expandable: true });
    expect(s.allocatorSettings).toBeUndefined();
    const [dev] = simulate(s, s.devices, {}).devices;
    expect(dev!.recorded.settings).toMatch(/expandable_segments:True/);
  });
});

describe('PyTorch before 2.3: expandable segments without settings', () => {
  it('a CUDA file that maps pages but records no allocator_settings replays as expandable', () => {
    const value = JSON.parse(generateSnapshotJson({ events: 3000, seed: 23, expandableSegments: true }).json);
    delete value.allocator_settings;
    const s = loadSnapshotBytes(new TextEncoder().encode(JSON.stringify(value)));
    expect(s.producer.kind).toBe('pytorch');
    const [dev] = simulate(s, s.devices, {}).devices;
    expect(dev!.recorded.settings).toMatch(/expandable_segments:True/);
    expect(dev!.fidelity.recorded_segment_events).toBeGreaterThan(0);
    expect(dev!.fidelity.segment_events_matched_percent).toBe(100);
  });
});

describe('torch_npu: frames', () => {
  it("the allocator's, OpPreparation's and unnamed frames are hidden; an operator's stays", () => {
    const kind = (name: string) => frameKind({ name, filename: 'libtorch_npu.so', line: 0 });
    expect(HIDDEN_KINDS.has(kind('c10_npu::NPUCachingAllocator::NpuCachingAllocator::malloc(void**)'))).toBe(
      true,
    );
    expect(HIDDEN_KINDS.has(kind('at_npu::native::OpPreparation::apply_tensor_without_format(long)'))).toBe(
      true,
    );
    expect(HIDDEN_KINDS.has(kind('??'))).toBe(true);
    expect(kind('at_npu::native::NPUNativeFunctions::matmul(at::Tensor const&)')).toBe('native');
  });
});

describe('torch_npu 5.0: the bare segment list', () => {
  it('blocks with only size and state are read, with the figures they hold', () => {
    const { s, facts } = npu({ version: '5.0' });
    expect(s.layout).toBe('segment-list');
    const sum = summarize(s).devices[0]!;
    expect(sum.reserved_bytes).toBe(facts.reserved);
    expect(sum.largest_inactive_block).toBe(facts.largestFree);
    // It writes no stream: none is named, least of all "0 (default)".
    expect(sum.streams).toEqual([]);
    expect(s.violations).toEqual([]);
  });
});

describe('a CUDA file that looks like torch_npu by its streams alone', () => {
  it('pointer streams alone say torch_npu, and say that they are not certain', () => {
    const value = sideStreamsBefore22();
    // Python frames only, as _record_memory_history records by default.
    const python = (o: { frames?: { filename: string }[] }) => {
      if (o.frames) o.frames = o.frames.filter((f) => f.filename.endsWith('.py'));
    };
    for (const seg of value.segments) [seg, ...seg.blocks].forEach(python);
    for (const trace of value.device_traces) trace.forEach(python);
    const load = () => loadSnapshotBytes(new TextEncoder().encode(JSON.stringify(value)));
    // Its blocks show no pad, as every CUDA file's do: that outweighs the streams.
    expect(load().producer).toEqual({ kind: 'pytorch', signals: [] });
    // Blocks without requested_size cannot tell: torch_npu's, said to be uncertain.
    for (const seg of value.segments) for (const b of seg.blocks) delete b.requested_size;
    const s = load();
    expect(s.producer.kind).toBe('torch_npu');
    expect(s.producer.signals.at(-1)).toMatch(/^not certain: a PyTorch file from before 2\.2/);
    // The evidence is quoted as found, never reworded in the NPU's words.
    expect(jsonInProducerWords(summarize(s), s.producer).producer.signals.at(-1)).toMatch(/no CUDA frame/);
  });

  it('PyTorch before 2.2 on side streams, with a CUDA frame: stays a PyTorch file', () => {
    const value = sideStreamsBefore22();
    const withFrames = value.device_traces[0].find(
      (x: { frames?: unknown[] }) => (x.frames?.length ?? 0) > 0,
    );
    withFrames.frames.unshift({
      filename: '/usr/lib/python3/dist-packages/torch/cuda/memory.py',
      line: 1,
      name: 'f',
    });
    const s = loadSnapshotBytes(new TextEncoder().encode(JSON.stringify(value)));
    expect(s.producer.kind).toBe('pytorch');
    expect(s.devices[0]!.device).toBe(0);
  });
});

/** A PyTorch CUDA file as 2.0/2.1 write it (no time_us, no allocator_settings), all on a side stream. */
function sideStreamsBefore22() {
  const value = JSON.parse(generateSnapshotJson({ events: 2000, seed: 31 }).json);
  delete value.allocator_settings;
  const side = 0x5555_a000_0000;
  for (const seg of value.segments) seg.stream = side;
  for (const trace of value.device_traces)
    for (const entry of trace) {
      delete entry.time_us;
      entry.stream = side;
    }
  return value;
}
