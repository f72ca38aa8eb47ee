import type { Snapshot } from '../../src/engine/model/snapshot.js';

/** Every column an entry fills, with frames spelled out, per entry, per device. */
export function columns(s: Snapshot): unknown[] {
  return s.devices.map((d) => deviceColumns(s, d));
}

function deviceColumns(s: Snapshot, d: Snapshot['devices'][number]): unknown[] {
  const t = d.trace;
  const text = (col: Int32Array | undefined, i: number) =>
    col && col[i]! >= 0 ? s.traceColumns.texts[col[i]!] : null;
  return Array.from({ length: t.length }, (_, i) => [
    s.traceColumns.actionNames[t.action[i]!],
    t.addr[i],
    t.size[i],
    s.traceColumns.streams[t.stream[i]!],
    t.timeUs[i],
    t.stack[i]! < 0 ? null : s.stacks.frames(t.stack[i]!),
    text(t.compileContext, i),
    text(t.userMetadata, i),
    s.traceColumns.extras.get(t.rowOf(i)) ?? null,
  ]);
}
