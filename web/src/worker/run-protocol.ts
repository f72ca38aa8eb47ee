import type { CellResult } from '../../../src/engine/analyses/run/index.js';
import type { Source } from './protocol.js';

/** One device's allocated bytes across its trace, sized for a small chart. */
export interface AllocCurve {
  /** 'time': x is µs since the trace's first entry; 'entry': x is the entry index. */
  axis: 'time' | 'entry';
  x: Float64Array;
  /** The most allocated in each bucket (peaks must survive the thinning). */
  y: Float64Array;
  /** x of the trace's first step marker (ProfilerStep#N), null when it has none. */
  firstStep: number | null;
}

/** The Run page's messages (merged into protocol.ts's Queries). */
export interface RunQueries {
  /** The open file's device `device` and file B's device `deviceB`, for one chart. */
  curves: {
    args: { device: number; other: Source; deviceB: number; points: number };
    result: { a: AllocCurve; b: AllocCurve };
  };
  /** What a run needs of a file dropped with others (decoded here, not kept: the open file stays). */
  runCell: { args: { source: Source }; result: CellResult };
}
