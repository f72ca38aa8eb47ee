import type { DeviceModel, Snapshot } from '../../model/snapshot.js';

/**
 * Which allocations a search term names: an address (0x hex or decimal) finds the allocations
 * whose bytes contain it; any other text finds those whose stack has a frame whose
 * "name (file:line)" contains it, ignoring case. Frames, then stacks, are matched once each, so
 * the walk over allocations is one typed-array lookup per allocation.
 */
export function searchAllocations(s: Snapshot, d: DeviceModel, term: string): Int32Array {
  const text = term.trim();
  if (text === '') return new Int32Array(0);
  const address = parseAddress(text);
  return address === null ? byFrame(s, d, text.toLowerCase()) : allocationsAtAddress(d, address);
}

/** "0x7f3a00000000" or "139887478669312"; anything else is frame text. */
export function parseAddress(text: string): number | null {
  if (/^0x[0-9a-f]+$/i.test(text)) return Number.parseInt(text.slice(2), 16);
  if (/^\d+$/.test(text)) return Number(text);
  return null;
}

/** The allocations whose bytes contain `address`, in table order (a search term, a tensor's data_ptr). */
export function allocationsAtAddress(d: DeviceModel, address: number): Int32Array {
  const a = d.allocations;
  const ids: number[] = [];
  for (let id = 0; id < a.count; id++) {
    const lo = a.addr[id]!;
    // A zero-byte allocation still sits at its address.
    if (address === lo || (address > lo && address < lo + a.size[id]!)) ids.push(id);
  }
  return Int32Array.from(ids);
}

function byFrame(s: Snapshot, d: DeviceModel, needle: string): Int32Array {
  const st = s.stacks;
  const frameHit = new Uint8Array(st.frameCount);
  for (let f = 0; f < st.frameCount; f++) {
    const fr = st.frame(f);
    frameHit[f] = `${fr.name} (${fr.filename}:${fr.line})`.toLowerCase().includes(needle) ? 1 : 0;
  }
  const stackHit = new Uint8Array(st.stackCount);
  for (let k = 0; k < st.stackCount; k++) {
    const frames = st.stack(k);
    for (let i = 0; i < frames.length; i++) {
      if (frameHit[frames[i]!] === 1) {
        stackHit[k] = 1;
        break;
      }
    }
  }
  const a = d.allocations;
  const ids: number[] = [];
  for (let id = 0; id < a.count; id++) {
    const k = a.stack[id]!;
    if (k >= 0 && stackHit[k] === 1) ids.push(id);
  }
  return Int32Array.from(ids);
}
