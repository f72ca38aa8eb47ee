import { memo, useEffect, useRef, useState } from 'react';
import type { PoolBlock, PoolSegment, PoolStateReport } from '../../../src/engine/analyses/pool-state.js';
import { exactBytes, formatBytes, formatCount, hex } from '../format.js';
import type { EngineClient } from '../worker/client.js';
import type { EntryInfo } from '../worker/protocol.js';

interface Props {
  /** false: not queried yet (the timeline's first level of detail goes first). */
  enabled: boolean;
  client: EngineClient;
  device: number;
  entry: number;
  info: EntryInfo | null;
  alloc: number | null;
  /** A segment a link pointed at (its address): outlined and scrolled into view. */
  segment: number | null;
  onSelect: (alloc: number) => void;
}

/**
 * The allocator's segments after the selected entry, each a bar of its blocks (allocated, pending
 * free) over free space, with its gap figures. Clicking a block pins its allocation everywhere.
 * Memoized: it can hold thousands of blocks, and a timeline pan or zoom must not redraw them.
 */
export const PoolView = memo(function PoolView(p: Props) {
  const [pool, setPool] = useState<PoolStateReport | null>(null);
  useEffect(() => {
    if (p.enabled) p.client.query('pool', { device: p.device, entry: p.entry }).then(setPool);
  }, [p.client, p.device, p.entry, p.enabled]);
  return (
    <section
      className="pool"
      aria-label="pool state"
      data-entry={pool?.after_entry}
      data-selected-alloc={p.alloc ?? ''}
    >
      <h3>Pool state after entry {formatCount(p.entry)}</h3>
      <EntryLine info={p.info} />
      {pool && (
        <p>
          {formatCount(pool.segments.length)} segments, reserved{' '}
          <span title={exactBytes(pool.reserved_bytes)}>{formatBytes(pool.reserved_bytes)}</span>, in blocks{' '}
          <span title={exactBytes(pool.allocated_bytes)}>{formatBytes(pool.allocated_bytes)}</span>
          {pool.outside.length > 0 &&
            `; ${pool.outside.length} live allocations lie outside any known segment`}
          <span className="legend">
            <i className="swatch allocated" /> allocated <i className="swatch pending_free" /> pending free{' '}
            <i className="swatch free" /> free
          </span>
        </p>
      )}
      <div className="segments">
        {pool?.segments.map((s) => (
          <SegmentRow
            key={s.address}
            s={s}
            selected={p.alloc}
            focused={s.address === p.segment}
            onSelect={p.onSelect}
          />
        ))}
      </div>
    </section>
  );
});

function EntryLine({ info }: { info: EntryInfo | null }) {
  if (info === null) return <p className="event">before the first entry</p>;
  return (
    <p className="event">
      <b>{info.action}</b>
      {info.size !== null && <> {formatBytes(info.size)}</>}
      {info.address !== null && <> at {hex(info.address)}</>} · allocated {formatBytes(info.allocated_bytes)},
      active {formatBytes(info.active_bytes)}, reserved {formatBytes(info.reserved_bytes)} · ←/→ step entries
    </p>
  );
}

function SegmentRow({
  s,
  selected,
  focused,
  onSelect,
}: {
  s: PoolSegment;
  selected: number | null;
  focused: boolean;
  onSelect: (a: number) => void;
}) {
  const ref = useRef<HTMLDivElement>(null);
  useEffect(() => {
    if (focused) ref.current?.scrollIntoView({ block: 'center' });
  }, [focused]);
  return (
    <div className={focused ? 'segment focused' : 'segment'} ref={ref} data-address={s.address}>
      <div className="seg-label" title={`segment ${hex(s.address)}: ${exactBytes(s.size)}`}>
        {hex(s.address)} · {formatBytes(s.size)}
        {s.pool ? ` · ${s.pool}` : ''}
        <br />
        gaps {formatBytes(s.gap_bytes)} in {formatCount(s.gap_count)}, max {formatBytes(s.max_gap)}
      </div>
      <div className="seg-bar">
        {s.blocks.map((b) => (
          <BlockBox key={b.alloc} b={b} seg={s} selected={b.alloc === selected} onSelect={onSelect} />
        ))}
      </div>
    </div>
  );
}

function BlockBox({
  b,
  seg,
  selected,
  onSelect,
}: {
  b: PoolBlock;
  seg: PoolSegment;
  selected: boolean;
  onSelect: (a: number) => void;
}) {
  const ref = useRef<HTMLButtonElement>(null);
  useEffect(() => {
    // A block picked in the timeline may sit in a segment far down the list.
    if (selected) ref.current?.scrollIntoView({ block: 'nearest', inline: 'nearest' });
  }, [selected]);
  const extent = b.block_size ?? b.size;
  const rounded = b.block_size === null ? '' : `, block ${exactBytes(b.block_size)}`;
  return (
    <button
      ref={ref}
      type="button"
      className={`b ${b.state}${selected ? ' selected' : ''}`}
      aria-pressed={selected}
      data-alloc={b.alloc}
      style={{
        left: `${((b.address - seg.address) / seg.size) * 100}%`,
        width: `${(extent / seg.size) * 100}%`,
      }}
      title={`allocation #${b.alloc} at ${hex(b.address)}: ${formatBytes(b.size)} requested (${exactBytes(b.size)}${rounded}), ${b.state.replace('_', ' ')}`}
      onClick={() => onSelect(b.alloc)}
    />
  );
}
