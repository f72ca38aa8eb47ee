import type { FindingView } from '../../../../src/engine/analyses/diagnosis/index.js';
import { formatCount } from '../../format.js';
import type { ViewState } from '../../url-state.js';
import type { Select } from '../analyses/bits.js';

/** A finding's link: the words on it, and what it does to the view. */
export interface FindingLink {
  label: string;
  go: () => void;
}

/**
 * The view that proves a finding: the OOM's entry on the timeline, a leak site's allocations
 * (searched, the newest pinned), a burst's entries in the Events table, a fragmented segment in
 * the pool state, the flame graph at the peak, the Overview's warnings.
 */
export function findingLink(
  show: FindingView,
  select: Select,
  update: (patch: Partial<ViewState>) => void,
): FindingLink {
  switch (show.view) {
    case 'timeline':
      if (show.search !== '')
        return {
          label: 'Show its allocations on the timeline',
          go: () => update({ tab: 'timeline', entry: show.entry, alloc: show.alloc, search: show.search }),
        };
      return {
        label: `Show entry ${formatCount(show.entry)} on the timeline`,
        go: () => select.entry(show.entry),
      };
    case 'events':
      return {
        label: `Show the burst's events (entries ${formatCount(show.first)}–${formatCount(show.last)})`,
        go: () => select.eventsIn(show.first, show.last),
      };
    case 'pool':
      return {
        label: 'Show the fragmented segment in the pool state',
        go: () => select.segment(show.segment, show.entry),
      };
    case 'flame':
      return {
        label: 'Show what held memory then (flame graph)',
        go: () => update({ tab: 'flame', flame: { peak: true, full: false, node: 0 } }),
      };
    case 'overview':
      return { label: 'Overview', go: () => update({ tab: 'overview' }) };
  }
}
