import { memo, useEffect, useMemo, useRef, useState } from 'react';
import { formatDuration } from '../../../src/engine/base/index.js';
import {
  orderSegments,
  type PoolSegment,
  type PoolStateReport,
  type SegmentOrder,
} from '../../../src/engine/views/pools/index.js';
import { exactBytes, formatBytes, formatCount, hex } from '../format.js';
import type { EntryInfo } from '../worker/protocol.js';
import { Bytes } from './analyses/bits.js';
import { SegmentBar } from './pool-bar.js';
import { useWords } from './producer-words.js';

interface Props {
  /** The pool state (the page asks for it with the rest of the selection); null until answered. */
  pool: PoolStateReport | null;
  /** The selected entry; null for a file without a trace (the pool state is the dump's). */
  entry: number | null;
  /** The selected entry's facts (null: before the first entry); undefined until answered. */
  info: EntryInfo | null | undefined;
  alloc: number | null;
  /** An address a link pointed at (a segment's, or a piece of one): its segment is outlined and scrolled into view. */
  segment: number | null;
  onSelect: (alloc: number) => void;
}

/**
 * The allocator's segments after the selected entry, each a bar of its blocks (allocated, pending
 * free) over free space, with its gap figures. Clicking a block pins its allocation everywhere.
 * Memoized: it can hold thousands of blocks, and a timeline pan or zoom must not redraw them.
 */
export const PoolView = memo(function PoolView(p: Props) {
  const pool = p.pool;
  const [order, setOrder] = useState<SegmentOrder>('address');
  const [widths, setWidths] = useState<SegmentWidths>('equal');
  return (
    <section
      className="pool"
      aria-label="pool state"
      data-entry={pool?.after_entry}
      data-selected-alloc={p.alloc ?? ''}
      data-segments={pool?.segments.length}
      data-blocks={pool?.segments.reduce((n, s) => n + s.blocks.length, 0)}
    >
      <h3>
        {p.entry === null ? 'Pool state at dump time' : `Pool state after entry ${formatCount(p.entry)}`}
      </h3>
      {p.entry !== null && <EntryLine info={p.info} />}
      {pool && (
        <p>
          {formatCount(pool.segments.length)} segments, reserved{' '}
          <span title={exactBytes(pool.reserved_bytes)}>{formatBytes(pool.reserved_bytes)}</span>, in blocks{' '}
          <span title={exactBytes(pool.allocated_bytes)}>{formatBytes(pool.allocated_bytes)}</span>
          {pool.outside.length > 0 &&
            `; ${pool.outside.length} live allocations lie outside any known segment`}
          <span className="legend">
            <i className="swatch allocated" /> allocated <i className="swatch pending_free" /> pending free{' '}
            <i className="swatch waste" /> rounding waste (blocks in the dump) <i className="swatch free" />{' '}
            free <i className="swatch private-pool" /> private pool
          </span>
        </p>
      )}
      {pool && (
        <p className="pool-controls">
          <label>
            bar widths{' '}
            <select
              aria-label="segment bar widths"
              value={widths}
              onChange={(e) => setWidths(e.target.value as SegmentWidths)}
            >
              <option value="equal">equal (each segment's own scale)</option>
              <option value="bytes">by bytes (one scale for all)</option>
            </select>
          </label>{' '}
          <label>
            order{' '}
            <select
              aria-label="segment order"
              value={order}
              onChange={(e) => setOrder(e.target.value as SegmentOrder)}
            >
              <option value="address">by address</option>
              <option value="gap">largest free gap first</option>
            </select>
          </label>
        </p>
      )}
      {pool && (
        <SegmentList
          segments={pool.segments}
          order={order}
          widths={widths}
          alloc={p.alloc}
          segment={p.segment}
          onSelect={p.onSelect}
        />
      )}
    </section>
  );
});

/** equal: every bar spans the row (each segment at its own scale); bytes: bar widths proportional to segment size. */
type SegmentWidths = 'equal' | 'bytes';

/** Height of a segment row, and of the list's viewport. */
const ROW = 34;
const VIEWPORT = 420;
/** Rows rendered beyond the viewport on each side, so a scroll shows no gap before React catches up. */
const OVERSCAN = 6;

/**
 * The segments as a virtual list: only the rows in view are in the page (a pool can hold
 * thousands of segments and tens of thousands of blocks). A selected allocation or a linked
 * segment scrolls its row into view.
 */
function SegmentList({
  segments: listed,
  order,
  widths,
  alloc,
  segment,
  onSelect,
}: {
  segments: PoolSegment[];
  order: SegmentOrder;
  widths: SegmentWidths;
  alloc: number | null;
  segment: number | null;
  onSelect: (a: number) => void;
}) {
  const ref = useRef<HTMLDivElement>(null);
  const [top, setTop] = useState(0);
  const segments = useMemo(() => orderSegments(listed, order), [listed, order]);
  const largest = useMemo(() => listed.reduce((m, s) => Math.max(m, s.size), 0), [listed]);
  const height = Math.min(VIEWPORT, segments.length * ROW);
  const target = useMemo(
    () =>
      segments.findIndex((s) =>
        segment !== null ? holds(s, segment) : alloc !== null && s.blocks.some((b) => b.alloc === alloc),
      ),
    [segments, alloc, segment],
  );
  useEffect(() => {
    const el = ref.current;
    if (el === null || target < 0) return;
    const y = target * ROW;
    if (y < el.scrollTop || y + ROW > el.scrollTop + height)
      el.scrollTop = Math.max(0, y - height / 2 + ROW / 2);
    if (segment !== null) el.scrollIntoView({ block: 'nearest' });
  }, [target, height, segment]);
  const first = Math.max(0, Math.floor(top / ROW) - OVERSCAN);
  const last = Math.min(segments.length, Math.ceil((top + height) / ROW) + OVERSCAN);
  return (
    <div
      className="segments"
      ref={ref}
      style={{ height }}
      onScroll={(e) => setTop(e.currentTarget.scrollTop)}
    >
      <div style={{ position: 'relative', height: segments.length * ROW }}>
        {segments.slice(first, last).map((s, i) => (
          <SegmentRow
            key={s.address}
            s={s}
            top={(first + i) * ROW}
            width={widths === 'bytes' ? s.size / largest : 1}
            selected={alloc}
            focused={segment !== null && holds(s, segment)}
            onSelect={onSelect}
          />
        ))}
      </div>
    </div>
  );
}

function holds(s: PoolSegment, address: number): boolean {
  return address >= s.address && address < s.address + s.size;
}

function EntryLine({ info }: { info: EntryInfo | null | undefined }) {
  const w = useWords();
  // While the worker is still busy (the first answers of a large file), say so rather than
  // describe an entry the page has not been told about.
  if (info === undefined) return <p className="event pending">reading this entry's state…</p>;
  if (info === null) return <p className="event">before the first entry</p>;
  const free = info.device_free_bytes;
  return (
    <p className="event">
      <b>{info.action}</b>
      {info.size !== null && (
        <>
          {' '}
          {info.action === 'oom' && 'requested '}
          <Bytes n={info.size} />
        </>
      )}
      {info.address !== null && <> at {hex(info.address)}</>}
      {info.since_start_us !== null && (
        <>, {formatDuration(Math.round(info.since_start_us))} into the trace</>
      )}
      {free !== null && (
        <>
          , {w('CUDA')} had <Bytes n={free} /> free
        </>
      )}{' '}
      · allocated <Bytes n={info.allocated_bytes} />, active <Bytes n={info.active_bytes} />, reserved{' '}
      <Bytes n={info.reserved_bytes} /> · ←/→ step entries
    </p>
  );
}

function SegmentRow({
  s,
  selected,
  focused,
  top,
  width,
  onSelect,
}: {
  s: PoolSegment;
  selected: number | null;
  focused: boolean;
  top: number;
  /** The bar's share of the row's bar column (1: all of it). */
  width: number;
  onSelect: (a: number) => void;
}) {
  const w = useWords();
  const pool = s.private_pool;
  return (
    <div
      className={`segment${focused ? ' focused' : ''}${pool ? ' private' : ''}`}
      data-address={s.address}
      data-private-pool={pool ? pool.join(',') : undefined}
      style={{ position: 'absolute', top, left: 0, right: 0, height: ROW - 4 }}
    >
      <div
        className="seg-label"
        title={`segment ${hex(s.address)}: ${exactBytes(s.size)}, ${formatCount(s.blocks.length)} blocks live`}
      >
        {hex(s.address)} · {formatBytes(s.size)}
        {/* A private pool's id in place of large/small: it decides who can use the free space. */}
        {pool ? (
          <b className="private-pool" title={w(`private pool (${pool.join(', ')}): CUDA graph or MemPool`)}>
            {' '}
            · pool ({pool.join(', ')})
          </b>
        ) : s.pool ? (
          ` · ${s.pool}`
        ) : (
          ''
        )}
        <br />
        {s.workspace
          ? "workspace (torch_npu's workspace allocator: held, no tensor's)"
          : `gaps ${formatBytes(s.gap_bytes)} in ${formatCount(s.gap_count)}, max ${formatBytes(s.max_gap)}`}
      </div>
      <SegmentBar s={s} selected={selected} onSelect={onSelect} width={width} />
    </div>
  );
}
