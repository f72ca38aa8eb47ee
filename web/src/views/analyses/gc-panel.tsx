import { useState } from 'react';
import { type CycleCitation, citationText } from '../../../../src/engine/analyses/cycles/index.js';
import type { BurstPattern, DeviceGc, GcBurst } from '../../../../src/engine/analyses/gc/index.js';
import {
  burstLivedText,
  burstWhenText,
  patternCountText,
  patternEachText,
  patternPeriodText,
  patternSpanText,
} from '../../../../src/engine/analyses/gc/index.js';
import { formatDuration, plural } from '../../../../src/engine/base/index.js';
import { formatFrame, topUserFrame } from '../../../../src/engine/derived/index.js';
import type { Frame } from '../../../../src/engine/model/index.js';
import { formatCount } from '../../format.js';
import { Bytes, EntryLink, type Select } from './bits.js';
import { Header, SiteGroupsTable } from './leaks-panel.js';

/** Bursts outside a pattern listed before "show all". */
const OUTLIERS_SHOWN = 10;

/**
 * `memlens gc`: collections that repeat, once per pattern (a long run makes thousands of the same
 * burst), then the bursts that fit no pattern, each linked to its entries.
 */
export function GcPanel({ r, select }: { r: DeviceGc & { cycles?: CycleCitation[][] }; select: Select }) {
  const [allOutliers, setAllOutliers] = useState(false);
  const shown = allOutliers ? r.outliers : r.outliers.slice(0, OUTLIERS_SHOWN);
  return (
    <section aria-label="gc bursts">
      <Header iterations={r.iterations} verdict={r.verdict} select={select} />
      {r.patterns.map((p) => (
        <Pattern
          key={p.first_entry}
          r={r}
          p={p}
          select={select}
          cited={p.bursts.flatMap((i) => r.cycles?.[i] ?? [])}
        />
      ))}
      {r.outliers.length > 0 && r.patterns.length > 0 && (
        <h4 className="outliers">{plural(r.outliers.length, 'burst')} outside these patterns</h4>
      )}
      {shown.map((i) => (
        <Burst
          key={r.bursts[i]!.entry}
          b={r.bursts[i]!}
          start={r.trace_start_us}
          select={select}
          cited={r.cycles?.[i] ?? []}
        />
      ))}
      {shown.length < r.outliers.length && (
        <button type="button" className="link" onClick={() => setAllOutliers(true)}>
          show {plural(r.outliers.length - shown.length, 'more burst')}
        </button>
      )}
    </section>
  );
}

function Pattern({
  r,
  p,
  select,
  cited,
}: {
  r: DeviceGc;
  p: BurstPattern;
  select: Select;
  cited: CycleCitation[];
}) {
  const typical = r.bursts[p.typical]!;
  const first = r.bursts[p.bursts[0]!]!;
  const last = r.bursts[p.bursts[p.bursts.length - 1]!]!;
  return (
    <div className="burst pattern" data-pattern-count={p.count}>
      <p>
        <strong>
          {patternCountText(p)} {patternPeriodText(p)}
        </strong>
        , {patternSpanText(p, r.trace_start_us)}: <strong>{patternEachText(p)}</strong>
      </p>
      <p className="indent">
        first <EntryLink k={first.entry} select={select} />, last <EntryLink k={last.entry} select={select} />
        ; typical burst <EventsLink b={typical} select={select} /> ({burstWhenText(typical, r.trace_start_us)}
        )
      </p>
      <p className="indent">
        {formatCount(typical.long_lived)} long-lived; they had lived {burstLivedText(typical)}
      </p>
      <FreedAt frames={p.free_frames} throughGc={p.through_gc === p.count} />
      {cited.length > 0 && (
        <p className="indent recorded-cycles">
          {plural(cited.length, 'recorded cycle')} freed by these bursts, the first: {citationText(cited[0]!)}
        </p>
      )}
      <Sites b={typical} select={select} />
    </div>
  );
}

function Burst({
  b,
  start,
  select,
  cited,
}: {
  b: GcBurst;
  start: number | null;
  select: Select;
  cited: CycleCitation[];
}) {
  return (
    <div className="burst">
      <p>
        burst at <EntryLink k={b.entry} select={select} /> (<EventsLink b={b} select={select} />){', '}
        {burstWhenText(b, start)}:{' '}
        <strong>
          {plural(b.count, 'allocation')}, <Bytes n={b.bytes} />
        </strong>{' '}
        freed{b.duration_us !== null && ` within ${formatDuration(b.duration_us)}`}
      </p>
      <p className="indent">
        {formatCount(b.long_lived)} long-lived; they had lived {burstLivedText(b)}
      </p>
      <FreedAt frames={b.free_frames} throughGc={b.through_gc} />
      {cited.map((c) => (
        <p key={c.file} className="indent recorded-cycles">
          {citationText(c)}
        </p>
      ))}
      <Sites b={b} select={select} />
    </div>
  );
}

function EventsLink({ b, select }: { b: GcBurst; select: Select }) {
  return (
    <button
      type="button"
      className="link"
      data-events={`${b.entry}..${b.last_entry}`}
      title="the Events table on the burst's entries"
      onClick={() => select.eventsIn(b.entry, b.last_entry)}
    >
      entries {formatCount(b.entry)}–{formatCount(b.last_entry)}
    </button>
  );
}

function FreedAt({ frames, throughGc }: { frames: Frame[]; throughGc: boolean }) {
  const freed = topUserFrame(frames);
  return (
    <p className="indent">
      freed at {freed ? formatFrame(freed) : 'a site with no stack'}
      {throughGc && <span className="warn"> — through the garbage collector (gc)</span>}
    </p>
  );
}

function Sites({ b, select }: { b: GcBurst; select: Select }) {
  return (
    <>
      <SiteGroupsTable groups={b.groups} select={select} />
      {b.other_groups > 0 && <p className="dim indent">… {plural(b.other_groups, 'more site')}</p>}
    </>
  );
}
