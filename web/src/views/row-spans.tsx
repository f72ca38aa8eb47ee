import { useEffect, useRef, useState } from 'react';
import { formatCount } from '../format.js';

/**
 * Browsers cap an element's height near 33.5 million pixels (Chromium), about 1.5 million table
 * rows: a longer selection is shown one span of rows at a time, and a jump to a row outside the
 * span (a selection made elsewhere, the arrow keys) moves to the span that holds it.
 */
export const SPAN_ROWS = 1_000_000;

export interface RowSpans {
  /** Position of the span's first row in the selection. */
  base: number;
  /** Rows in the span. */
  rows: number;
  /** Scrolls to selection position `pos`, changing span first when needed. */
  scrollTo(pos: number): void;
}

/** `scrollToIndex` scrolls the virtualiser to a row of the span (set after the virtualiser exists). */
export function useRowSpans(
  count: number,
  version: number | undefined,
  scrollToIndex: { current: (index: number) => void },
): RowSpans {
  const [base, setBase] = useState(0);
  const pending = useRef<number | null>(null);
  // A new selection starts at its first span.
  // biome-ignore lint/correctness/useExhaustiveDependencies: version names the selection
  useEffect(() => setBase(0), [version]);
  // Once the new span is rendered, scroll to the row that asked for it.
  // biome-ignore lint/correctness/useExhaustiveDependencies: runs when the span changes
  useEffect(() => {
    if (pending.current === null) return;
    scrollToIndex.current(pending.current);
    pending.current = null;
  }, [base, scrollToIndex]);
  return {
    base,
    rows: Math.max(0, Math.min(SPAN_ROWS, count - base)),
    scrollTo: (pos) => {
      const b = Math.floor(pos / SPAN_ROWS) * SPAN_ROWS;
      if (b === base) scrollToIndex.current(pos - base);
      else {
        pending.current = pos - b;
        setBase(b);
      }
    },
  };
}

/** "rows 1,000,001–2,000,000 of 7,500,000" with the previous and next spans; nothing for short tables. */
export function SpanPager({ spans, count }: { spans: RowSpans; count: number }) {
  if (count <= SPAN_ROWS) return null;
  const { base } = spans;
  return (
    <div className="span-pager">
      <button type="button" disabled={base === 0} onClick={() => spans.scrollTo(base - SPAN_ROWS)}>
        ◀ previous
      </button>{' '}
      rows {formatCount(base + 1)}–{formatCount(base + spans.rows)} of {formatCount(count)}{' '}
      <button
        type="button"
        disabled={base + SPAN_ROWS >= count}
        onClick={() => spans.scrollTo(base + SPAN_ROWS)}
      >
        next ▶
      </button>
    </div>
  );
}
