import { useEffect, useMemo, useRef } from 'react';
import { lowerBound } from '../../../src/engine/model/index.js';
import type { PoolBlock, PoolSegment } from '../../../src/engine/views/pools/index.js';
import { exactBytes, formatBytes, hex } from '../format.js';
import { sizedContext, useParentWidth } from '../timeline/canvas.js';
import { DENSE_BLOCKS } from './pool-dense.js';

const HEIGHT = 22;
const COLOURS: Record<string, string> = { allocated: '#4e79a7', pending_free: '#e15759' };
/** The block's bytes beyond the request (the allocator's rounding), where the dump gives the block's size. */
const WASTE = '#f1ce63';

function wasteOf(b: PoolBlock): number {
  return b.block_size === null ? 0 : Math.max(0, b.block_size - b.size);
}

interface BarProps {
  s: PoolSegment;
  selected: number | null;
  onSelect: (a: number) => void;
}

/**
 * A segment's bar: a button per block, or one canvas when the segment holds thousands. `width`:
 * its share of the row (segments sized by bytes), never under a few pixels.
 */
export function SegmentBar({ width = 1, ...p }: BarProps & { width?: number }) {
  return (
    <div className="seg-bar" style={width < 1 ? { width: `max(4px, ${width * 100}%)` } : undefined}>
      {p.s.blocks.length > DENSE_BLOCKS ? (
        <DenseBar {...p} />
      ) : (
        p.s.blocks.map((b) => (
          <BlockBox key={b.alloc} b={b} seg={p.s} selected={b.alloc === p.selected} onSelect={p.onSelect} />
        ))
      )}
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
  const extent = b.block_size ?? b.size;
  return (
    <button
      type="button"
      className={`b ${b.state}${selected ? ' selected' : ''}`}
      aria-pressed={selected}
      data-alloc={b.alloc}
      style={{
        left: `${((b.address - seg.address) / seg.size) * 100}%`,
        width: `${(extent / seg.size) * 100}%`,
      }}
      title={blockTitle(b)}
      onClick={() => onSelect(b.alloc)}
    >
      {wasteOf(b) > 0 && <span className="waste" style={{ width: `${(wasteOf(b) / extent) * 100}%` }} />}
    </button>
  );
}

function blockTitle(b: PoolBlock): string {
  const waste = wasteOf(b);
  const rounded =
    b.block_size === null
      ? ''
      : `, block ${exactBytes(b.block_size)}${waste > 0 ? `: ${exactBytes(waste)} lost to rounding` : ''}`;
  return `allocation #${b.alloc} at ${hex(b.address)}: ${formatBytes(b.size)} requested (${exactBytes(b.size)}${rounded}), ${b.state.replace('_', ' ')}`;
}

/**
 * Thousands of blocks drawn into one canvas; a click picks the block under the pointer (the
 * nearest within a pixel) and the hover title names it. The selected block stays a button on top,
 * so it can be found, focused and read like the others.
 */
function DenseBar({ s, selected, onSelect }: BarProps) {
  const ref = useRef<HTMLCanvasElement>(null);
  const width = useParentWidth(ref);
  const sorted = useMemo(() => [...s.blocks].sort((a, b) => a.address - b.address), [s.blocks]);
  const starts = useMemo(() => Float64Array.from(sorted, (b) => b.address), [sorted]);
  useEffect(() => {
    const g = sizedContext(ref.current!, width, HEIGHT);
    const scale = width / s.size;
    for (const b of sorted) {
      g.fillStyle = COLOURS[b.state] ?? '#888';
      const x = (b.address - s.address) * scale;
      const w = (b.block_size ?? b.size) * scale;
      // A pixel's gap between blocks wide enough to spare it, as the buttons' borders draw.
      const drawn = w >= 3 ? w - 1 : Math.max(1, w);
      g.fillRect(x, 0, drawn, HEIGHT);
      const waste = wasteOf(b) * scale;
      if (waste >= 1) {
        g.fillStyle = WASTE;
        g.fillRect(x + drawn - waste, 0, waste, HEIGHT);
      }
    }
  }, [sorted, s, width]);
  const at = (e: React.MouseEvent): PoolBlock | null => {
    const x = e.clientX - e.currentTarget.getBoundingClientRect().left;
    const bytesPerPx = s.size / width;
    const addr = s.address + x * bytesPerPx;
    // The last block starting at or before the pointer, else the next one if within a pixel.
    const i = lowerBound(starts, addr + 1) - 1;
    const b = sorted[i];
    if (b !== undefined && addr < b.address + Math.max(b.block_size ?? b.size, bytesPerPx)) return b;
    const next = sorted[i + 1];
    return next !== undefined && next.address - addr <= bytesPerPx ? next : null;
  };
  const pinned = sorted.find((b) => b.alloc === selected);
  return (
    <>
      <canvas
        ref={ref}
        className="dense-bar"
        style={{ width: '100%', height: HEIGHT }}
        aria-label={`${sorted.length} blocks`}
        onMouseMove={(e) => {
          const b = at(e);
          e.currentTarget.title = b === null ? 'free' : blockTitle(b);
        }}
        onClick={(e) => {
          const b = at(e);
          if (b !== null) onSelect(b.alloc);
        }}
      />
      {pinned !== undefined && <BlockBox b={pinned} seg={s} selected onSelect={onSelect} />}
    </>
  );
}
