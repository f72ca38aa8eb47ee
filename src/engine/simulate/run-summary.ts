/** The figures a simulated run is judged by, side by side with other runs. */
import type { Replay } from './replay.js';
import { describeSettings, type SimSettings } from './settings.js';

export interface RunSummary {
  /** The settings as a PYTORCH_CUDA_ALLOC_CONF string ('' = all defaults). */
  settings: string;
  peak_reserved_bytes: number;
  /** Block bytes (rounded sizes), as torch.cuda.max_memory_allocated() counts them. */
  peak_allocated_bytes: number;
  /** Requested bytes, as the trace's allocated curve counts them. */
  peak_requested_bytes: number;
  /** Reserved minus allocated when reserved memory peaked ("reserved but unallocated"). */
  fragmentation_at_peak_bytes: number;
  fragmentation_at_peak_percent: number;
  /** cudaMalloc calls and expandable page maps (num_device_alloc). */
  cuda_malloc_calls: number;
  /** cudaFree calls and expandable page unmaps (num_device_free). */
  cuda_free_calls: number;
  alloc_retries: number;
  oom: boolean;
  ooms: number;
  first_oom_entry: number;
  /** Requests that failed in the recording (`oom`) and fit in this run. */
  recorded_ooms_avoided: number;
  final_reserved_bytes: number;
}

export function summarizeRun(settings: SimSettings, r: Replay): RunSummary {
  const st = r.allocator.stats;
  const frag = st.peakReserved - st.allocatedAtPeakReserved;
  return {
    settings: describeSettings(settings),
    peak_reserved_bytes: st.peakReserved,
    peak_allocated_bytes: st.peakAllocated,
    peak_requested_bytes: st.peakRequested,
    fragmentation_at_peak_bytes: frag,
    fragmentation_at_peak_percent: st.peakReserved > 0 ? round1((100 * frag) / st.peakReserved) : 0,
    cuda_malloc_calls: st.deviceAllocs,
    cuda_free_calls: st.deviceFrees,
    alloc_retries: st.retries,
    oom: st.ooms > 0,
    ooms: st.ooms,
    first_oom_entry: st.firstOomEntry,
    recorded_ooms_avoided: r.oomsAvoided,
    final_reserved_bytes: st.reserved,
  };
}

function round1(x: number): number {
  return Math.round(x * 10) / 10;
}

/** Best first: no OOM, then lowest peak reserved, then fewest cudaMalloc calls. */
export function rankRuns(runs: RunSummary[]): RunSummary[] {
  return [...runs].sort(
    (x, y) =>
      Number(x.oom) - Number(y.oom) ||
      x.ooms - y.ooms ||
      x.peak_reserved_bytes - y.peak_reserved_bytes ||
      x.cuda_malloc_calls - y.cuda_malloc_calls,
  );
}
