import { RUN_FIGURES, type RunFigure } from '../../src/engine/analyses/run/index.js';
import type { TimelineAxis } from '../../src/engine/views/timeline/index.js';
import { readTableState, type TableState, writeTableState } from './views/table-url.js';

/**
 * What the page is showing, kept in the URL's hash so a reload or a shared link restores it:
 * file, device, tab, selected entry and allocation, and the timeline's window and axis.
 */
/**
 * 'run': the Run page of a run (`memlens view DIR`, or files dropped together), no file needed;
 * 'cycles': the run's recorded reference cycles (memlens record --cycles), no file needed either.
 */
export const TABS = [
  'diagnosis',
  'overview',
  'timeline',
  'events',
  'blocks',
  'flame',
  'analyses',
  'run',
  'cycles',
] as const;
export type Tab = (typeof TABS)[number];
/** The Analyses tab's panels. */
export const PANELS = ['leaks', 'gc', 'frag', 'oom', 'categories', 'whatif', 'compare'] as const;
export type Panel = (typeof PANELS)[number];

export interface ViewState {
  file: string | null;
  device: number | null;
  tab: Tab;
  axis: TimelineAxis;
  /** Selected trace entry (the pool state shows the state after it). */
  entry: number | null;
  alloc: number | null;
  /** Timeline window on the axis; null = the whole trace. */
  window: [number, number] | null;
  /** The Analyses tab's open panel. */
  panel: Panel;
  /** Timeline search: an address or stack-frame text; '' = none. */
  search: string;
  /** Timeline shows only this CUDA stream (raw id); null = every stream. */
  stream: number | null;
  /**
   * Timeline stacks allocations (active memory), segments (reserved memory, memory_viz's segment
   * timeline) or pools (reserved memory by pool and stream, memory_viz's private pools view).
   */
  stack: TimelineStack;
  /** Timeline zoom: the y axis follows the window's top (proportional) or stays the whole trace's (horizontal). */
  zoom: ZoomMode;
  /** Filters and sort of the Events or Blocks tab on show. */
  table: TableState | null;
  /** What-if panel: allocator settings tried (PYTORCH_CUDA_ALLOC_CONF syntax); '' = none. */
  set: string;
  /** Compare panel: the served file compared with the open one (B − A); null = none. */
  compare: string | null;
  /** Flame graph: what it shows and the frame it is zoomed into. */
  flame: FlameState;
  /** Pool state: the segment (its address) a link pointed at; null = none. */
  segment: number | null;
  /** Run page: the figure its heatmap shows. */
  figure: RunFigure;
}

export type TimelineStack = 'allocations' | 'segments' | 'pools';
/** MindStudio Insight's two zoom modes (proportional is its default). */
export type ZoomMode = 'proportional' | 'horizontal';

export interface FlameState {
  /** Live memory at the peak (true) or at the selected entry (false); null = the peak until an entry is selected. */
  peak: boolean | null;
  /** Every frame, not only the user's own code. */
  full: boolean;
  /** The zoomed frame: its node in the flame tree (0 = the root). */
  node: number;
}

const DEFAULTS: ViewState = {
  file: null,
  device: null,
  // The app opens on the answer: what happened to the memory, and a link to the view that proves it.
  tab: 'diagnosis',
  axis: 'entry',
  entry: null,
  alloc: null,
  window: null,
  panel: 'leaks',
  search: '',
  stream: null,
  stack: 'allocations',
  zoom: 'proportional',
  table: null,
  set: '',
  compare: null,
  flame: { peak: null, full: false, node: 0 },
  segment: null,
  figure: 'allocated',
};

export function readUrlState(hash: string = location.hash): ViewState {
  const p = new URLSearchParams(hash.replace(/^#/, ''));
  const int = (k: string): number | null => {
    const v = p.get(k);
    return v !== null && /^-?\d+$/.test(v) ? Number(v) : null;
  };
  const x0 = Number(p.get('x0') ?? Number.NaN);
  const x1 = Number(p.get('x1') ?? Number.NaN);
  return {
    file: p.get('file'),
    device: int('device'),
    tab: oneOf(TABS, p.get('tab')) ?? DEFAULTS.tab,
    axis: p.get('axis') === 'time' ? 'time' : 'entry',
    entry: int('entry'),
    alloc: int('alloc'),
    window: Number.isFinite(x0) && Number.isFinite(x1) && x1 > x0 ? [x0, x1] : null,
    panel: oneOf(PANELS, p.get('panel')) ?? DEFAULTS.panel,
    search: p.get('q') ?? '',
    stream: int('stream'),
    stack: oneOf(['segments', 'pools'] as const, p.get('stack')) ?? 'allocations',
    zoom: p.get('zoom') === 'horizontal' ? 'horizontal' : 'proportional',
    table: readTableState(p, p.get('tab') ?? ''),
    set: p.get('set') ?? '',
    compare: p.get('cmp'),
    flame: {
      peak: p.get('fat') === 'peak' ? true : p.get('fat') === 'entry' ? false : null,
      full: p.get('fstacks') === 'full',
      node: Math.max(0, int('fnode') ?? 0),
    },
    segment: int('seg'),
    figure: oneOf(Object.keys(RUN_FIGURES) as RunFigure[], p.get('fig')) ?? DEFAULTS.figure,
  };
}

function oneOf<T extends string>(values: readonly T[], v: string | null): T | null {
  return values.find((x) => x === v) ?? null;
}

export function writeUrlState(s: ViewState): void {
  const p = new URLSearchParams();
  if (s.file !== null) p.set('file', s.file);
  if (s.device !== null) p.set('device', String(s.device));
  p.set('tab', s.tab);
  if (s.tab === 'analyses') p.set('panel', s.panel);
  if (s.set !== '') p.set('set', s.set);
  if (s.compare !== null) p.set('cmp', s.compare);
  if (s.search !== '') p.set('q', s.search);
  if (s.stream !== null) p.set('stream', String(s.stream));
  if (s.stack !== 'allocations') p.set('stack', s.stack);
  if (s.zoom !== 'proportional') p.set('zoom', s.zoom);
  if (s.table !== null && s.table.kind === s.tab) writeTableState(p, s.table);
  if (s.tab === 'flame') writeFlameState(p, s.flame);
  if (s.tab === 'run' && s.figure !== DEFAULTS.figure) p.set('fig', s.figure);
  p.set('axis', s.axis);
  if (s.entry !== null) p.set('entry', String(s.entry));
  if (s.alloc !== null) p.set('alloc', String(s.alloc));
  if (s.segment !== null && s.tab === 'timeline') p.set('seg', String(s.segment));
  if (s.window !== null) {
    p.set('x0', String(round(s.window[0])));
    p.set('x1', String(round(s.window[1])));
  }
  const hash = `#${p.toString()}`;
  // The whole URL, not `hash` alone: a page in an iframe's srcdoc (a report shown in a Jupyter
  // cell) resolves a bare '#…' against its parent's URL, which it may not take.
  if (hash !== location.hash) history.replaceState(null, '', location.href.replace(/#.*$/, '') + hash);
}

function writeFlameState(p: URLSearchParams, f: FlameState): void {
  if (f.peak !== null) p.set('fat', f.peak ? 'peak' : 'entry');
  if (f.full) p.set('fstacks', 'full');
  if (f.node !== 0) p.set('fnode', String(f.node));
}

/**
 * Windows are fractional while zooming; thousandths of an entry or microsecond restore the same
 * view. (Not significant digits: wall-time positions are epoch microseconds, ~1.7e15, and ten
 * significant digits moved a window by up to half a second.)
 */
function round(x: number): number {
  return Number(x.toFixed(3));
}
