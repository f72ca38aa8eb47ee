import { type AllocationFacts, type Allocations, allocationFacts, pairAllocations } from './allocations.js';
import type { DeviceTrace } from './device-trace.js';
import type { EntryFacts } from './entry-facts.js';
import { LiveIndex } from './live-index.js';
import type { SegmentTables } from './segments.js';
import type { DeviceModel } from './snapshot.js';
import type { RunningTotals } from './totals.js';
import { Action, type TraceColumns } from './trace-columns.js';

/**
 * A device's model whose allocation table (and the live index on it) is built on first use: a
 * summary reads only the pairing's facts, which a pass that writes no table gives (on a 7.5M-entry
 * trace, the table is 130 MB and a tenth of the load).
 */
export class LazyDevice implements DeviceModel {
  private pairing: Allocations | undefined;
  private liveIndex: LiveIndex | undefined;
  private factsOnly: AllocationFacts | undefined;

  constructor(
    readonly device: number,
    readonly trace: DeviceTrace,
    readonly facts: EntryFacts,
    readonly totals: RunningTotals,
    readonly segmentIds: number[],
    private readonly tables: SegmentTables,
    private readonly cols: TraceColumns,
  ) {
    // Streams only the dump shows get their codes now, so the code list never grows later,
    // whenever (and on whichever device first) the table is built.
    for (const id of segmentIds) cols.streamCode(tables.segments[id]!.stream);
  }

  get allocations(): Allocations {
    this.pairing ??= pairAllocations(
      this.trace,
      this.tables,
      this.device,
      (raw) => this.cols.streamCode(raw),
      this.facts.actionCounts[Action.alloc]!,
    );
    return this.pairing;
  }

  get live(): LiveIndex {
    this.liveIndex ??= new LiveIndex(this.allocations, this.trace.length);
    return this.liveIndex;
  }

  get allocationFacts(): AllocationFacts {
    if (this.pairing) return this.pairing.facts;
    this.factsOnly ??= allocationFacts(this.trace, this.tables, this.device);
    return this.factsOnly;
  }
}
