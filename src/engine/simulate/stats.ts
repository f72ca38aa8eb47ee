/** The allocator statistics a simulated run reports (allocator-spec §7), with their peaks. */
export class SimStats {
  /** Bytes obtained from CUDA: cudaMalloc'd segments + mapped pages. */
  reserved = 0;
  /** Block bytes of allocated blocks (`allocated_bytes`). */
  allocated = 0;
  /** Requested bytes of allocated blocks (what the trace's allocated curve counts). */
  requested = 0;
  active = 0;
  peakReserved = 0;
  peakAllocated = 0;
  peakRequested = 0;
  /** Reserved bytes when allocated block bytes first reached their peak. */
  reservedAtPeakAllocated = 0;
  /** Peak reserved over the entries before the first OOM (the whole run if none). */
  peakReservedBeforeOom = 0;
  /** Reserved and allocated bytes when the first OOM was raised (-1: none). */
  reservedAtOom = -1;
  allocatedAtOom = -1;
  /** cudaMalloc calls and expandable page maps (`num_device_alloc`). */
  deviceAllocs = 0;
  /** cudaFree calls and expandable unmaps (`num_device_free`). */
  deviceFrees = 0;
  segmentAllocs = 0;
  segmentFrees = 0;
  retries = 0;
  ooms = 0;
  firstOomEntry = -1;

  onSegmentAlloc(bytes: number): void {
    this.reserved += bytes;
    this.deviceAllocs++;
    this.segmentAllocs++;
  }

  onMap(bytes: number): void {
    this.reserved += bytes;
    this.deviceAllocs++;
  }

  onSegmentFree(bytes: number): void {
    this.reserved -= bytes;
    this.deviceFrees++;
    this.segmentFrees++;
  }

  onUnmap(bytes: number): void {
    this.reserved -= bytes;
    this.deviceFrees++;
  }

  onAlloc(blockBytes: number, requested: number): void {
    this.allocated += blockBytes;
    this.requested += requested;
    this.active += blockBytes;
    this.notePeakAllocated();
    if (this.requested > this.peakRequested) this.peakRequested = this.requested;
    // Reserved only grows inside a malloc, so checking once the malloc succeeded sees every peak.
    this.notePeakReserved();
  }

  onFreeRequested(blockBytes: number, requested: number): void {
    this.allocated -= blockBytes;
    this.requested -= requested;
  }

  onFreeCompleted(blockBytes: number): void {
    this.active -= blockBytes;
  }

  oom(entry: number): void {
    this.ooms++;
    if (this.firstOomEntry < 0) {
      this.firstOomEntry = entry;
      this.reservedAtOom = this.reserved;
      this.allocatedAtOom = this.allocated;
    }
    this.notePeakReserved();
  }

  /** Starting state (blocks alive when the recorded window opens) counts toward the peaks. */
  settle(): void {
    // Loading only allocates, so the loaded state is its own peak, with all its segments reserved.
    if (this.allocated >= this.peakAllocated) {
      this.peakAllocated = this.allocated;
      this.reservedAtPeakAllocated = this.reserved;
    }
    this.peakRequested = Math.max(this.peakRequested, this.requested);
    this.notePeakReserved();
  }

  private notePeakAllocated(): void {
    if (this.allocated > this.peakAllocated) {
      this.peakAllocated = this.allocated;
      this.reservedAtPeakAllocated = this.reserved;
    }
  }

  private notePeakReserved(): void {
    // Reserved grows inside a malloc: what the failing one mapped does not count as completed.
    if (this.firstOomEntry < 0 && this.reserved > this.peakReservedBeforeOom)
      this.peakReservedBeforeOom = this.reserved;
    if (this.reserved > this.peakReserved) this.peakReserved = this.reserved;
  }
}
