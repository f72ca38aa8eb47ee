/**
 * The trace the simulated allocator writes, in the snapshot's own actions and units
 * (allocator-spec §6): requested bytes for alloc/free, real bytes for segment events, the rounded
 * request and free device memory for oom. `segmentsOnly` keeps just segment and oom events
 * (what fidelity checks and reports need) so a sweep over millions of requests stays small.
 */
import { Action } from '../model/trace-columns.js';
import { type Column, grown } from './block-store.js';

export class EventLog {
  length = 0;
  action = new Uint8Array(256);
  addr = new Float64Array(256);
  size = new Float64Array(256);
  stream = new Uint16Array(256);
  /** The recorded trace entry being replayed when the event happened. */
  entry = new Int32Array(256);
  /** Reserved bytes after the event. */
  reserved = new Float64Array(256);

  constructor(readonly segmentsOnly: boolean) {}

  push(action: Action, addr: number, size: number, stream: number, entry: number, reserved: number): void {
    if (this.segmentsOnly && (action <= Action.free_completed || action === Action.free)) return;
    const i = this.length;
    if (i === this.action.length) this.grow();
    this.action[i] = action;
    this.addr[i] = addr;
    this.size[i] = size;
    this.stream[i] = stream;
    this.entry[i] = entry;
    this.reserved[i] = reserved;
    this.length = i + 1;
  }

  private grow(): void {
    const cap = this.action.length * 2;
    const g = <T extends Column>(a: T): T => grown(a, cap);
    this.action = g(this.action);
    this.addr = g(this.addr);
    this.size = g(this.size);
    this.stream = g(this.stream);
    this.entry = g(this.entry);
    this.reserved = g(this.reserved);
  }
}
