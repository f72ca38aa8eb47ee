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
  /** Allocated block bytes when reserved memory first reached its peak. */
  allocatedAtPeakReserved = 0;
  /** Trace entry during which reserved first reached its peak. */
  peakReservedEntry = -1;
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

  onAlloc(blockBytes: number, requested: number, entry: number): void {
    this.allocated += blockBytes;
    this.requested += requested;
    this.active += blockBytes;
    if (this.allocated > this.peakAllocated) this.peakAllocated = this.allocated;
    if (this.requested > this.peakRequested) this.peakRequested = this.requested;
    // Reserved only grows inside a malloc, so checking once the malloc succeeded sees every peak.
    this.notePeakReserved(entry);
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
    if (this.firstOomEntry < 0) this.firstOomEntry = entry;
    this.notePeakReserved(entry);
  }

  /** Starting state (blocks alive when the recorded window opens) counts toward the peaks. */
  settle(): void {
    this.peakAllocated = Math.max(this.peakAllocated, this.allocated);
    this.peakRequested = Math.max(this.peakRequested, this.requested);
    // Called after the start state was loaded, whose allocs all pass entry -1.
    this.notePeakReserved(-1);
  }

  private notePeakReserved(entry: number): void {
    if (this.reserved > this.peakReserved) {
      this.peakReserved = this.reserved;
      this.allocatedAtPeakReserved = this.allocated;
      this.peakReservedEntry = entry;
    }
  }
}
